"""``reads_back_equal``: it vouches for an event only when the log would give back an equal one.

The Runner hands its appended events to the A2A server as what the log holds when this says
so (``InvocationOutcome.events``); a wrong True would answer a task with objects the log does
not hold.
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any

import pytest
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.events.test_event_json import events

from cairn.events import Event
from cairn.events.event import uuid4_text
from cairn.events.read_back import reads_back_equal


class Text(str):
    """A str subclass: JSON keeps the text, the parse gives a plain str."""


# Values JSON changes on the way back (a tuple comes back a list, a key a str, ...).
POISON: list[Any] = [
    (1, 2),
    {"a": (1,)},
    {1: "one"},
    {"when": datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)},
    [b"bytes"],
    {"id": uuid.UUID(int=1)},
    {"k": {1, 2}},
    Text("subclass"),
    {"n": float("inf")},
]


def reads_back(event: Event) -> Event:
    return Event.model_validate_json(event.to_json())


@settings(max_examples=300, deadline=None)
@given(events)
def test_an_event_of_plain_values_is_vouched_for_and_reads_back_equal(event: Event) -> None:
    assert reads_back_equal(event)
    assert reads_back(event) == event


def _poisoned(event: Event, where: str, value: Any) -> Event:
    if where == "output":
        event.output = value
    elif where == "custom_metadata":
        event.custom_metadata = {"x": value}
    elif where == "state_delta":
        event.actions.state_delta["x"] = value
    elif where == "call_args":
        call = types.FunctionCall(name="f", args={"x": value})
        event.content = types.Content(role="model", parts=[types.Part(function_call=call)])
    elif where == "response":
        response = types.FunctionResponse(name="f", response={"x": value})
        event.content = types.Content(role="user", parts=[types.Part(function_response=response)])
    return event


@settings(max_examples=300, deadline=None)
@given(
    events,
    st.sampled_from(["output", "custom_metadata", "state_delta", "call_args", "response"]),
    st.sampled_from(range(len(POISON))),
)
def test_an_event_holding_a_value_json_changes_is_never_vouched_for_wrongly(
    event: Event, where: str, poison: int
) -> None:
    event = _poisoned(event, where, POISON[poison])
    try:
        back = reads_back(event)
    except Exception:  # JSON cannot even hold it: it could never be stored
        assert not reads_back_equal(event)
        return
    if reads_back_equal(event):
        assert back == event


@pytest.mark.parametrize("value", POISON, ids=[type(v).__name__ for v in POISON])
def test_each_changing_value_is_refused_where_any_value_may_go(value: Any) -> None:
    event = Event(invocation_id="e-1", author="a", output=value)
    assert not reads_back_equal(event)


def test_a_model_subclass_or_a_none_where_a_default_is_not_none_is_refused() -> None:
    class Wider(types.Part):
        pass

    wider = Event(invocation_id="e-1", author="a", content=types.Content(parts=[Wider(text="x")]))
    assert not reads_back_equal(wider)
    emptied = Event(invocation_id="e-1", author="a")
    emptied.actions = None  # type: ignore[assignment]  # the JSON leaves it out: default back
    assert not reads_back_equal(emptied)
    assert reads_back(emptied) != emptied


def test_event_ids_are_random_version_4_uuids() -> None:
    made = {uuid4_text() for _ in range(2000)}
    assert len(made) == 2000
    for text in made:
        parsed = uuid.UUID(text)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122 and str(parsed) == text
    assert uuid.UUID(Event(invocation_id="e", author="a").id).version == 4
