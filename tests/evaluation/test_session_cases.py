"""eval_case_from_session: each user event of a stored session's log (a message, or an answer
to a pause) is one turn, with the agent's events up to the next one, and the state around
the chosen turns folded from the log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from tests.evaluation.session_runs import CONFIRMED, Answer, clerk, drive

from cairn.errors import InputValidationError, InvocationNotFoundError
from cairn.evaluation.eval_case import (
    EvalCase,
    Invocation,
    InvocationEvents,
    get_all_tool_calls,
    get_all_tool_responses,
)
from cairn.evaluation.session_cases import eval_case_from_session
from cairn.events.event import Event
from cairn.runners import Runner
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.session import Session

INITIAL = {"user:name": "ann", "greeting": "hi", "notes": 10}


async def _session(tmp_path: Path, turns: list[str | Answer]) -> tuple[Session, dict[str, Any]]:
    service = InMemorySessionService()
    runner = Runner(app_name="shop", agent=clerk(tmp_path), session_service=service)
    created = await service.create_session(app_name="shop", user_id="ann", state=INITIAL)
    await drive(runner, "ann", created.id, turns)
    session = await service.get_session(app_name="shop", user_id="ann", session_id=created.id)
    initial = await service.get_initial_state(app_name="shop", user_id="ann", session_id=created.id)
    assert session is not None and initial is not None
    return session, initial


def _text(content: types.Content | None) -> str:
    assert content is not None
    return "".join(p.text or "" for p in content.parts or [])


def _invocation_of(session: Session, message: str) -> str:
    [found] = [
        e.invocation_id
        for e in session.events
        if e.author == "user" and e.content is not None and _text(e.content) == message
    ]
    return found


def _events(invocation: Invocation) -> InvocationEvents:
    assert isinstance(invocation.intermediate_data, InvocationEvents)
    return invocation.intermediate_data


def _calls(invocation: Invocation) -> list[tuple[str | None, dict[str, Any] | None]]:
    return [(c.name, c.args) for c in get_all_tool_calls(invocation.intermediate_data)]


async def test_each_user_message_and_each_answer_to_a_pause_is_one_turn(tmp_path: Path) -> None:
    turns: list[str | Answer] = [
        "note first",
        "refund 5",
        CONFIRMED,
        "ask q1",
        Answer("ask_manager", {"approved": True}),
        "hello",
    ]
    session, initial = await _session(tmp_path, turns)
    case = eval_case_from_session(session, initial_state=initial)
    conversation = case.conversation
    assert conversation is not None and len(conversation) == 6
    note, refund, approval, ask, manager, hello = conversation

    # A message turn: the call, its response, and the answer kept as the final response.
    assert _text(note.user_content) == "note first"
    assert _calls(note) == [("note", {"text": "first"})]
    [noted] = get_all_tool_responses(note.intermediate_data)
    assert noted.response == {"noted": "first"}
    assert _text(note.final_response) == 'results: {"note": {"noted": "first"}}'
    assert [e.author for e in _events(note).invocation_events] == ["clerk"] * 3
    assert _events(note).invocation_events[-1].content is None  # it is on final_response

    # A pause: the call and the confirmation request; the placeholder response ends the turn.
    assert _calls(refund) == [
        ("refund", {"amount": 5}),
        ("adk_request_confirmation", _calls(refund)[1][1]),
    ]
    assert refund.final_response is not None
    [placeholder] = [p.function_response for p in refund.final_response.parts or []]
    assert placeholder is not None and placeholder.name == "refund"
    assert "requires confirmation" in str(placeholder.response)

    # The answer continues the same invocation, and is a turn of its own.
    assert approval.invocation_id == refund.invocation_id
    [answer] = [p.function_response for p in approval.user_content.parts or []]
    assert answer is not None and answer.name == "adk_request_confirmation"
    assert answer.response == {"confirmed": True}
    [refunded] = get_all_tool_responses(approval.intermediate_data)
    assert refunded.response == {"refunded": 5}
    assert _text(approval.final_response) == 'results: {"refund": {"refunded": 5}}'

    # A long-running tool: its call ends the turn; the user's answer starts the next one.
    assert _calls(ask) == [("ask_manager", {"question": "q1"})]
    assert ask.final_response is not None and ask.final_response.parts
    assert ask.final_response.parts[0].function_call is not None
    assert manager.invocation_id == ask.invocation_id
    assert _text(manager.final_response) == 'results: {"ask_manager": {"approved": true}}'
    assert _calls(manager) == []

    assert _text(hello.final_response) == "ok: hello"
    assert len({refund.invocation_id, ask.invocation_id, hello.invocation_id}) == 3
    user_events = [e for e in session.events if e.author == "user"]
    assert [i.creation_timestamp for i in conversation] == [e.timestamp for e in user_events]

    assert case.session_input is not None
    assert (case.session_input.app_name, case.session_input.user_id) == ("shop", "ann")
    assert case.session_input.state == INITIAL
    # The note tool wrote notes, user:last_note and temp:scratch: temp: keys are never kept.
    assert case.final_session_state == {**INITIAL, "notes": 11, "user:last_note": "first"}
    assert case.eval_id == f"session_{session.id}"
    assert case.creation_timestamp == user_events[0].timestamp


async def test_chosen_invocations_keep_their_turns_and_the_state_around_them(
    tmp_path: Path,
) -> None:
    session, initial = await _session(
        tmp_path, ["note first", "refund 5", CONFIRMED, "note second", "hello"]
    )
    refund_id = _invocation_of(session, "refund 5")
    case = eval_case_from_session(session, invocation_ids=[refund_id], initial_state=initial)
    assert case.conversation is not None
    assert [i.invocation_id for i in case.conversation] == [refund_id, refund_id]
    assert case.session_input is not None
    after_first = {**INITIAL, "notes": 11, "user:last_note": "first"}
    assert case.session_input.state == after_first
    assert case.final_session_state == after_first  # "note second" is after the chosen turns
    assert case.eval_id == f"session_{session.id}_{refund_id}"

    last_note_id = _invocation_of(session, "note second")
    case = eval_case_from_session(
        session, invocation_ids=[last_note_id], eval_id="second_note", initial_state=initial
    )
    assert case.eval_id == "second_note"
    assert case.session_input is not None and case.session_input.state == after_first
    assert case.final_session_state == {**INITIAL, "notes": 12, "user:last_note": "second"}


async def test_an_unknown_invocation_is_named_with_the_known_ones(tmp_path: Path) -> None:
    session, _ = await _session(tmp_path, ["hello", "again"])
    known = list(dict.fromkeys(e.invocation_id for e in session.events))
    with pytest.raises(InvocationNotFoundError) as raised:
        eval_case_from_session(session, invocation_ids=[known[0], "e-nope"])
    message = str(raised.value)
    assert "'e-nope'" in message and session.id in message
    assert all(repr(i) in message for i in known)
    assert raised.value.invocation_id == "e-nope"


async def test_without_initial_state_the_keys_no_event_changed_are_the_start(
    tmp_path: Path,
) -> None:
    session, _ = await _session(tmp_path, ["note first"])
    case = eval_case_from_session(session)
    assert case.session_input is not None
    # "notes" was 10 at creation but the note tool changed it: the log alone cannot say.
    assert case.session_input.state == {"user:name": "ann", "greeting": "hi"}
    assert case.final_session_state == {
        "user:name": "ann",
        "greeting": "hi",
        "notes": 11,
        "user:last_note": "first",
    }


def _said(text: str, **fields: Any) -> Event:
    return Event(author="user", message=text, **fields)


def _model(text: str, **fields: Any) -> Event:
    return Event(
        author="bot",
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        **fields,
    )


def test_partial_events_workflow_inputs_and_state_only_events_start_no_turn() -> None:
    events = [
        Event(author="user", invocation_id="i0", state={"mode": "quiet", "temp:t": 1}),
        _said("hi", invocation_id="i1"),
        _model("Hel", invocation_id="i1", partial=True),
        _said("node input", invocation_id="i1", node_path="flow/step"),
        _model("Hello", invocation_id="i1", state={"greeted": True}),
        _said("bye", invocation_id="i2"),
        _model("Bye", invocation_id="i2"),
    ]
    session = Session(id="s1", app_name="app", user_id="u", state={}, events=events)
    case = eval_case_from_session(session, initial_state={})
    assert case.conversation is not None
    assert [(_text(i.user_content), _text(i.final_response)) for i in case.conversation] == [
        ("hi", "Hello"),
        ("bye", "Bye"),
    ]
    [only] = _events(case.conversation[0]).invocation_events
    assert only.author == "bot" and only.content is None  # the partial one is not kept
    assert case.session_input is not None and case.session_input.state == {"mode": "quiet"}
    assert case.final_session_state == {"mode": "quiet", "greeted": True}
    assert case.eval_id == "session_s1"

    later = eval_case_from_session(session, invocation_ids=["i2"], initial_state={})
    assert later.session_input is not None
    assert later.session_input.state == {"mode": "quiet", "greeted": True}


def test_a_session_without_user_turns_is_refused() -> None:
    session = Session(id="s2", app_name="app", user_id="u", events=[_model("unprompted")])
    with pytest.raises(InputValidationError, match=r"'s2'.*no user turn"):
        eval_case_from_session(session)


async def test_the_case_round_trips_through_json(tmp_path: Path) -> None:
    session, initial = await _session(tmp_path, ["refund 5", CONFIRMED])
    case = eval_case_from_session(session, initial_state=initial)
    again = EvalCase.model_validate_json(case.model_dump_json(by_alias=True))
    assert again == case
