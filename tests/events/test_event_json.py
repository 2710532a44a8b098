"""Event JSON: lossless round trip, camelCase output, tolerant but strict input."""

from __future__ import annotations

import calendar
import json
from typing import Any

import pytest
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from cairn.events import Event, EventActions, EventCompaction, NodeInfo, ToolConfirmation

# --------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------

short_text = st.text(max_size=12)
finite_floats = st.floats(allow_nan=False, allow_infinity=False)

json_scalars = st.none() | st.booleans() | st.integers() | finite_floats | short_text
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(short_text, children, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(short_text, json_values, max_size=5)  # includes {}


def optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | strategy


text_parts = st.builds(types.Part, text=short_text)
function_call_parts = st.builds(
    lambda id_, name, args: types.Part(
        function_call=types.FunctionCall(id=id_, name=name, args=args)
    ),
    optional(short_text),
    st.text(min_size=1, max_size=12),
    json_objects,
)
function_response_parts = st.builds(
    lambda id_, name, response: types.Part(
        function_response=types.FunctionResponse(id=id_, name=name, response=response)
    ),
    optional(short_text),
    st.text(min_size=1, max_size=12),
    json_objects,
)
contents = st.builds(
    types.Content,
    role=optional(st.sampled_from(["user", "model"])),
    parts=st.lists(text_parts | function_call_parts | function_response_parts, max_size=4),
)

route_values = st.booleans() | st.integers() | short_text
routes = optional(route_values | st.lists(route_values, max_size=4))

tool_confirmations = st.builds(
    ToolConfirmation, hint=short_text, confirmed=st.booleans(), payload=json_values
)
# A lambda, not the class: hypothesis reads the pydantic signature's camelCase aliases as
# extra required arguments and would pass both spellings.
compactions = st.builds(
    lambda start, end, content: EventCompaction(
        start_timestamp=start, end_timestamp=end, compacted_content=content
    ),
    finite_floats,
    finite_floats,
    optional(contents),
)

event_actions = st.builds(
    EventActions,
    skip_summarization=optional(st.booleans()),
    state_delta=json_objects,
    artifact_delta=st.dictionaries(short_text, st.integers(min_value=0), max_size=3),
    transfer_to_agent=optional(short_text),
    transfer_reason=optional(short_text),
    escalate=optional(st.booleans()),
    requested_auth_configs=json_objects,
    requested_tool_confirmations=st.dictionaries(short_text, tool_confirmations, max_size=3),
    compaction=optional(compactions),
    end_of_agent=optional(st.booleans()),
    agent_state=optional(json_objects),
    rewind_before_invocation_id=optional(short_text),
    route=routes,
)

node_infos = st.builds(
    NodeInfo,
    path=short_text,
    output_for=optional(st.lists(short_text, max_size=3)),
    message_as_output=optional(st.booleans()),
)

events = st.builds(
    Event,
    id=st.text(min_size=1, max_size=36),
    timestamp=finite_floats,
    invocation_id=short_text,
    author=short_text,
    branch=optional(short_text),
    model_version=optional(short_text),
    content=optional(contents),
    partial=optional(st.booleans()),
    turn_complete=optional(st.booleans()),
    finish_reason=optional(st.sampled_from(list(types.FinishReason))),
    error_code=optional(short_text),
    error_message=optional(short_text),
    interrupted=optional(st.booleans()),
    custom_metadata=optional(json_objects),
    actions=event_actions,
    output=json_values,
    node_info=node_infos,
    long_running_tool_ids=optional(st.frozensets(short_text, max_size=4).map(set)),
)


# --------------------------------------------------------------------------------------
# Round trip
# --------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(events)
def test_json_round_trip_is_lossless(event: Event) -> None:
    text = event.to_json()
    back = Event.from_json(text)
    assert back == event
    assert back.to_json() == text


@settings(max_examples=100, deadline=None)
@given(routes)
def test_route_keeps_its_json_type(route: Any) -> None:
    # True == 1 in Python, so compare the types too: a bool route must stay a bool.
    back = Event.from_json(Event(actions=EventActions(route=route)).to_json()).actions.route
    if isinstance(route, list):
        assert [type(v) for v in back] == [type(v) for v in route]
    else:
        assert type(back) is type(route)
    assert back == route


def test_to_dict_is_the_parsed_to_json() -> None:
    event = Event(message="hi", state={"a": [1, None]}, long_running_tool_ids={"b", "a"})
    assert event.to_dict() == json.loads(event.to_json())


# --------------------------------------------------------------------------------------
# Absent vs empty
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, {}, {"k": None}])
def test_custom_metadata_none_and_empty_stay_distinct(value: dict[str, Any] | None) -> None:
    back = Event.from_json(Event(custom_metadata=value).to_json())
    assert back.custom_metadata == value
    assert (back.custom_metadata is None) == (value is None)


@pytest.mark.parametrize("value", [None, {}, {"step": 2}])
def test_agent_state_none_and_empty_stay_distinct(value: dict[str, Any] | None) -> None:
    back = Event.from_json(Event(actions=EventActions(agent_state=value)).to_json())
    assert back.actions.agent_state == value
    assert (back.actions.agent_state is None) == (value is None)


def test_default_event_json_keeps_empty_maps_and_omits_none() -> None:
    text = Event().to_json()
    assert '"stateDelta":{}' in text
    assert '"artifactDelta":{}' in text
    assert '"partial"' not in text
    assert '"customMetadata"' not in text
    assert '"longRunningToolIds"' not in text


def test_empty_long_running_tool_ids_round_trip_as_empty_set() -> None:
    event = Event(long_running_tool_ids=set())
    assert '"longRunningToolIds":[]' in event.to_json()
    assert Event.from_json(event.to_json()).long_running_tool_ids == set()


def test_none_values_inside_state_delta_survive() -> None:
    event = Event(state={"gone": None, "nested": {"x": None, "y": [None]}})
    back = Event.from_json(event.to_json())
    assert back.actions.state_delta == {"gone": None, "nested": {"x": None, "y": [None]}}


# --------------------------------------------------------------------------------------
# Key spelling
# --------------------------------------------------------------------------------------


def test_json_keys_are_camel_case() -> None:
    event = Event(
        invocation_id="e-1",
        state={"a": 1},
        long_running_tool_ids={"t"},
        node_path="wf@1/a@1",
    )
    data = json.loads(event.to_json())
    assert data["invocationId"] == "e-1"
    assert data["actions"]["stateDelta"] == {"a": 1}
    assert data["longRunningToolIds"] == ["t"]
    assert data["nodeInfo"] == {"path": "wf@1/a@1"}
    for snake in ("invocation_id", "long_running_tool_ids", "node_info"):
        assert snake not in data
    assert "state_delta" not in data["actions"]


def test_snake_case_input_is_accepted() -> None:
    event = Event.model_validate({"invocation_id": "e-1", "actions": {"state_delta": {"a": 1}}})
    assert event.invocation_id == "e-1"
    assert event.actions.state_delta == {"a": 1}


def test_snake_case_json_input_is_accepted() -> None:
    event = Event.from_json('{"invocation_id": "e-1", "long_running_tool_ids": ["x"]}')
    assert event.invocation_id == "e-1"
    assert event.long_running_tool_ids == {"x"}


def test_long_running_tool_ids_serialize_as_sorted_list() -> None:
    ids = {"zeta", "alpha", "mid", "Beta", "0"}
    data = json.loads(Event(long_running_tool_ids=ids).to_json())
    assert data["longRunningToolIds"] == ["0", "Beta", "alpha", "mid", "zeta"]


def test_unknown_actions_field_is_refused_and_named() -> None:
    with pytest.raises(ValidationError) as info:
        Event.model_validate({"actions": {"stateDelt": {}}})
    assert "stateDelt" in str(info.value)


def test_unknown_actions_field_in_json_is_refused() -> None:
    with pytest.raises(ValidationError) as info:
        Event.from_json('{"actions": {"stateDelt": {"a": 1}}}')
    assert "stateDelt" in str(info.value)


# --------------------------------------------------------------------------------------
# Timestamps
# --------------------------------------------------------------------------------------


def _epoch(y: int, mo: int, d: int, h: int, mi: int, s: int, micro: int, offset_s: int) -> float:
    """Exact epoch seconds of a wall-clock time at a UTC offset, via integer arithmetic."""
    whole = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) - offset_s
    return (whole * 10**6 + micro) / 10**6


@pytest.mark.parametrize("value", [1700000000, 1700000000.25, 0, -12.5])
def test_timestamp_accepts_epoch_numbers(value: float) -> None:
    assert Event.model_validate({"timestamp": value}).timestamp == float(value)
    assert Event.from_json(json.dumps({"timestamp": value})).timestamp == float(value)


def test_timestamp_accepts_numeric_string() -> None:
    assert Event.model_validate({"timestamp": "1700000000.5"}).timestamp == 1700000000.5
    assert Event.from_json('{"timestamp": "1700000000.5"}').timestamp == 1700000000.5


def test_timestamp_accepts_rfc3339_utc_z() -> None:
    event = Event.from_json('{"timestamp": "2026-11-30T06:51:42.123456Z"}')
    assert event.timestamp == _epoch(2026, 11, 30, 6, 51, 42, 123456, 0)


def test_timestamp_accepts_rfc3339_with_offset() -> None:
    event = Event.model_validate({"timestamp": "2026-11-30T06:51:42+08:00"})
    expected = _epoch(2026, 11, 30, 6, 51, 42, 0, 8 * 3600)
    assert event.timestamp == expected
    # The offset really is applied: the same wall clock in UTC is 8 hours later.
    utc = Event.model_validate({"timestamp": "2026-11-30T06:51:42Z"}).timestamp
    assert utc - event.timestamp == 8 * 3600


def test_timestamp_without_offset_is_refused() -> None:
    with pytest.raises(ValidationError, match="UTC offset"):
        Event.model_validate({"timestamp": "2026-11-30T06:51:42"})


def test_timestamp_garbage_string_is_refused() -> None:
    with pytest.raises(ValidationError, match="RFC 3339"):
        Event.from_json('{"timestamp": "last tuesday"}')


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", float("nan"), float("inf")])
def test_non_finite_timestamp_is_refused(value: Any) -> None:
    with pytest.raises(ValidationError):
        Event.model_validate({"timestamp": value})
