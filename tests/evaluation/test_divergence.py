"""first_divergence: the first place a run departs from the recorded one, of each kind."""

from __future__ import annotations

import dataclasses

import pytest
from google.genai import types

from cairn.evaluation.divergence import Divergence, DivergenceKind, first_divergence
from cairn.evaluation.eval_case import (
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
)


def _call(name: str, call_id: str = "x", by: str = "root", **args: object) -> InvocationEvent:
    part = types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))
    return InvocationEvent(author=by, content=types.Content(role="model", parts=[part]))


def _said(text: str, by: str = "root") -> InvocationEvent:
    return InvocationEvent(
        author=by, content=types.Content(role="model", parts=[types.Part(text=text)])
    )


def _turn(user: str, answer: str | None, *events: InvocationEvent) -> Invocation:
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text=user)]),
        final_response=(
            None if answer is None else types.Content(role="model", parts=[types.Part(text=answer)])
        ),
        intermediate_data=InvocationEvents(invocation_events=list(events)),
    )


RECORDED = [
    _turn("hi", "Hello!"),
    _turn(
        "weather in Paris and Rome?",
        "Sunny in Paris, rain in Rome.",
        _said("Let me look.", by="root"),
        _call("get_weather", city="Paris", by="weather"),
        _call("get_weather", city="Rome", by="weather"),
    ),
]


def test_the_same_run_with_other_ids_and_spacing_does_not_diverge() -> None:
    actual = [
        _turn("hi", "  Hello! "),
        _turn(
            "weather in Paris and Rome?",
            "Sunny in Paris,\n rain in Rome.",
            _said("Let me look.", by="root"),
            _call("get_weather", call_id="other-1", city="Paris", by="weather"),
            _call("get_weather", call_id="other-2", city="Rome", by="weather"),
        ),
    ]
    assert first_divergence(RECORDED, actual) is None
    assert first_divergence([], []) is None


def test_other_arguments_are_a_tool_call_divergence_at_the_actual_event() -> None:
    actual = [
        RECORDED[0],
        _turn(
            "weather in Paris and Rome?",
            "Sunny in Paris, rain in Rome.",
            _said("Let me look."),
            _said("Hmm."),
            _call("get_weather", city="Lyon", by="weather"),
            _call("get_weather", city="Rome", by="weather"),
        ),
    ]
    found = first_divergence(RECORDED, actual)
    assert found == Divergence(
        invocation_index=1,
        event_index=2,
        kind=DivergenceKind.TOOL_CALL,
        expected="get_weather(city='Paris')",
        actual="get_weather(city='Lyon')",
    )
    assert found.describe() == (
        "invocation 2, event 3: expected get_weather(city='Paris'), got get_weather(city='Lyon')"
    )


def test_another_tool_name_is_a_tool_call_divergence() -> None:
    actual = [
        RECORDED[0],
        _turn("w", "x", _said("Let me look."), _call("get_forecast", city="Paris", n=2)),
    ]
    found = first_divergence(RECORDED, actual)
    assert found is not None and found.kind is DivergenceKind.TOOL_CALL
    assert (found.invocation_index, found.event_index) == (1, 1)
    assert found.actual == "get_forecast(city='Paris', n=2)"


def test_a_call_the_run_did_not_make_is_missing_at_the_recorded_event() -> None:
    actual = [
        RECORDED[0],
        _turn("w", "Sunny in Paris.", _call("get_weather", city="Paris", by="weather")),
    ]
    found = first_divergence(RECORDED, actual)
    assert found == Divergence(
        invocation_index=1,
        event_index=2,
        kind=DivergenceKind.MISSING_TOOL_CALL,
        expected="get_weather(city='Rome')",
        actual="no more tool calls",
    )
    assert found.describe() == (
        "invocation 2, event 3: expected get_weather(city='Rome'), got no more tool calls"
    )


def test_a_call_the_recording_lacks_is_extra() -> None:
    actual = [RECORDED[0], _turn("w", "x", *_events(RECORDED[1]), _call("book", day="mon"))]
    found = first_divergence(RECORDED, actual)
    assert found == Divergence(
        invocation_index=1,
        event_index=3,
        kind=DivergenceKind.EXTRA_TOOL_CALL,
        expected="no more tool calls",
        actual="book(day='mon')",
    )


def test_the_same_call_by_another_agent_is_an_author_divergence() -> None:
    actual = [
        RECORDED[0],
        _turn(
            "w",
            "Sunny in Paris, rain in Rome.",
            _said("Let me look."),
            _call("get_weather", city="Paris", by="root"),
        ),
    ]
    found = first_divergence(RECORDED, actual)
    assert found == Divergence(
        invocation_index=1,
        event_index=1,
        kind=DivergenceKind.AUTHOR,
        expected="get_weather(city='Paris') by 'weather'",
        actual="get_weather(city='Paris') by 'root'",
    )


def test_same_calls_but_another_answer_is_a_final_response_divergence() -> None:
    actual = [_turn("hi", "Good day!"), RECORDED[1]]
    found = first_divergence(RECORDED, actual)
    assert found == Divergence(
        invocation_index=0,
        event_index=None,
        kind=DivergenceKind.FINAL_RESPONSE,
        expected="'Hello!'",
        actual="'Good day!'",
    )
    assert found.describe() == "invocation 1, final response: expected 'Hello!', got 'Good day!'"
    silent = first_divergence(RECORDED, [_turn("hi", None), RECORDED[1]])
    assert silent is not None and silent.actual == "''"


def test_tool_calls_are_compared_before_the_final_response() -> None:
    actual = [RECORDED[0], _turn("w", "Something else entirely.", _said("Let me look."))]
    found = first_divergence(RECORDED, actual)
    assert found is not None and found.kind is DivergenceKind.MISSING_TOOL_CALL


def test_a_turn_the_run_lacks_is_a_missing_invocation() -> None:
    found = first_divergence(RECORDED, RECORDED[:1])
    assert found == Divergence(
        invocation_index=1,
        event_index=None,
        kind=DivergenceKind.MISSING_INVOCATION,
        expected="a turn with user message 'weather in Paris and Rome?'",
        actual="no invocation",
    )
    assert found.describe() == (
        "invocation 2: expected a turn with user message 'weather in Paris and Rome?', "
        "got no invocation"
    )


def test_a_turn_the_recording_lacks_is_an_extra_invocation() -> None:
    answer = types.FunctionResponse(id="c", name="adk_request_confirmation", response={})
    extra = Invocation(
        user_content=types.Content(role="user", parts=[types.Part(function_response=answer)])
    )
    found = first_divergence(RECORDED, [*RECORDED, extra])
    assert found == Divergence(
        invocation_index=2,
        event_index=None,
        kind=DivergenceKind.EXTRA_INVOCATION,
        expected="no invocation",
        actual="a turn answering adk_request_confirmation",
    )


def test_the_hand_written_shape_compares_calls_without_authors() -> None:
    written = [
        Invocation(
            user_content=types.Content(role="user", parts=[types.Part(text="w")]),
            intermediate_data=IntermediateData(
                tool_uses=[
                    types.FunctionCall(name="get_weather", args={"city": "Paris"}),
                    types.FunctionCall(name="get_weather", args={"city": "Rome"}),
                ]
            ),
        )
    ]
    same = [_turn("w", None, _call("get_weather", city="Paris", by="x"), _said("..."))]
    found = first_divergence(written, same)
    assert found is not None and found.kind is DivergenceKind.MISSING_TOOL_CALL
    assert (found.event_index, found.expected) == (1, "get_weather(city='Rome')")


def test_long_values_are_shortened_and_the_result_is_frozen() -> None:
    long_text = "a" * 200
    found = first_divergence([_turn("q", long_text)], [_turn("q", "b")])
    assert found is not None and len(found.expected) == 80 and found.expected.endswith("...")
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.kind = DivergenceKind.AUTHOR  # type: ignore[misc]


def _events(invocation: Invocation) -> list[InvocationEvent]:
    assert isinstance(invocation.intermediate_data, InvocationEvents)
    return invocation.intermediate_data.invocation_events
