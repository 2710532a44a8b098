"""Event construction, convenience keywords, content readers and is_final_response."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pytest
from google.genai import types
from pydantic import ValidationError

from cairn.errors import InvalidStateValueError
from cairn.events import Event, EventActions, EventCompaction, NodeInfo
from cairn.events.json_values import check_json_state, copy_json


def _call(name: str, id_: str = "c1") -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=id_, name=name, args={"x": 1}))


def _response(name: str, id_: str = "c1") -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(id=id_, name=name, response={"ok": True})
    )


def _model(*parts: types.Part) -> types.Content:
    return types.Content(role="model", parts=list(parts))


# --------------------------------------------------------------------------------------
# id and timestamp
# --------------------------------------------------------------------------------------


def test_id_is_assigned_and_unique() -> None:
    ids = [Event().id for _ in range(200)]
    assert all(ids)
    assert len(set(ids)) == len(ids)


def test_id_is_assigned_when_validating_a_dict() -> None:
    assert Event.model_validate({"author": "a"}).id != ""


def test_explicit_id_is_kept() -> None:
    event = Event(id="e-1")
    assert event.id == "e-1"
    assert Event.from_json(event.to_json()).id == "e-1"


def test_timestamp_is_assigned_at_construction() -> None:
    before = time.time()
    event = Event()
    after = time.time()
    assert before <= event.timestamp <= after


def test_explicit_timestamp_is_kept() -> None:
    assert Event(timestamp=12.5).timestamp == 12.5


# --------------------------------------------------------------------------------------
# Convenience keywords
# --------------------------------------------------------------------------------------


def test_message_str_becomes_user_content() -> None:
    event = Event(message="hi")
    assert event.content is not None
    assert event.content.role == "user"
    assert event.content.parts is not None
    assert len(event.content.parts) == 1
    assert event.content.parts[0].text == "hi"


def test_message_part_becomes_user_content() -> None:
    event = Event(message=types.Part(text="x"))
    assert event.content == types.Content(role="user", parts=[types.Part(text="x")])


def test_message_content_is_kept_as_given() -> None:
    content = _model(types.Part(text="from model"))
    assert Event(message=content).content == content


def test_message_and_content_together_are_refused() -> None:
    with pytest.raises(ValidationError, match="both message= and content="):
        Event(message="hi", content=types.Content(role="user", parts=[types.Part(text="x")]))


def test_state_sets_state_delta() -> None:
    event = Event(state={"a": 1})
    assert event.actions.state_delta == {"a": 1}


def test_state_merges_into_actions_model() -> None:
    event = Event(state={"a": 1}, actions=EventActions(escalate=True))
    assert event.actions.escalate is True
    assert event.actions.state_delta == {"a": 1}


def test_state_merges_into_actions_dict() -> None:
    event = Event(state={"a": 1}, actions={"escalate": True})
    assert event.actions.escalate is True
    assert event.actions.state_delta == {"a": 1}


def test_state_merges_into_camel_case_actions_dict() -> None:
    event = Event(state={"a": 1}, actions={"skipSummarization": True})
    assert event.actions.skip_summarization is True
    assert event.actions.state_delta == {"a": 1}


def test_state_with_camel_case_state_delta_in_actions_dict_matches_snake_case() -> None:
    snake = Event(state={"a": 1}, actions={"state_delta": {"b": 2}})
    model = Event(state={"a": 1}, actions=EventActions(state_delta={"b": 2}))
    camel = Event(state={"a": 1}, actions={"stateDelta": {"b": 2}})
    assert camel.actions.state_delta == snake.actions.state_delta == model.actions.state_delta


def test_route_sets_actions_route() -> None:
    assert Event(route="x").actions.route == "x"
    assert Event(route=["a", "b"]).actions.route == ["a", "b"]


def test_route_is_validated() -> None:
    with pytest.raises(ValidationError):
        Event(route=1.5)


def test_route_is_validated_when_merged_into_actions_model() -> None:
    with pytest.raises(ValidationError):
        Event(route=1.5, actions=EventActions(escalate=True))


def test_node_path_sets_node_info() -> None:
    event = Event(node_path="wf@1/a@2")
    assert event.node_info.path == "wf@1/a@2"
    assert event.node_info.name == "a"
    assert event.node_info.run_id == "2"
    assert event.node_info.parent_path == "wf@1"


def test_node_path_keeps_other_node_info_fields() -> None:
    event = Event(node_path="wf@1/a@2", node_info=NodeInfo(output_for=["wf@1"]))
    assert event.node_info.path == "wf@1/a@2"
    assert event.node_info.output_for == ["wf@1"]


def test_node_info_at_root_and_without_run() -> None:
    info = NodeInfo(path="wf")
    assert (info.name, info.run_id, info.parent_path) == ("wf", "", "")


def test_message_property_reads_and_writes_content() -> None:
    event = Event(message="first")
    assert event.message is event.content
    event.message = "second"
    assert event.content == types.Content(role="user", parts=[types.Part(text="second")])
    event.message = None
    assert event.content is None


# --------------------------------------------------------------------------------------
# Reading function calls and responses
# --------------------------------------------------------------------------------------


def test_function_calls_and_responses_in_order() -> None:
    event = Event(
        content=_model(
            _call("f1", "c1"),
            types.Part(text="between"),
            _response("r1", "c0"),
            _call("f2", "c2"),
            _response("r2", "c9"),
        )
    )
    assert [(c.name, c.id) for c in event.get_function_calls()] == [("f1", "c1"), ("f2", "c2")]
    assert [(r.name, r.id) for r in event.get_function_responses()] == [
        ("r1", "c0"),
        ("r2", "c9"),
    ]


@pytest.mark.parametrize(
    "content", [None, types.Content(role="model"), types.Content(role="model", parts=[])]
)
def test_no_content_means_no_calls_or_responses(content: types.Content | None) -> None:
    event = Event(content=content)
    assert event.get_function_calls() == []
    assert event.get_function_responses() == []


# --------------------------------------------------------------------------------------
# is_final_response
# --------------------------------------------------------------------------------------


def test_compaction_event_is_never_final() -> None:
    compaction = EventCompaction(start_timestamp=1.0, end_timestamp=2.0)
    text = _model(types.Part(text="summary"))
    # Without compaction both of these are final; compaction overrides every other rule.
    assert Event(content=text).is_final_response()
    assert Event(content=text, actions=EventActions(skip_summarization=True)).is_final_response()
    assert not Event(content=text, actions=EventActions(compaction=compaction)).is_final_response()
    assert not Event(
        content=text, actions=EventActions(compaction=compaction, skip_summarization=True)
    ).is_final_response()


def test_skip_summarization_makes_function_response_final() -> None:
    content = _model(_response("f"))
    assert not Event(content=content).is_final_response()
    assert Event(content=content, actions=EventActions(skip_summarization=True)).is_final_response()


def test_long_running_tool_ids_make_function_call_final() -> None:
    content = _model(_call("f"))
    assert not Event(content=content).is_final_response()
    assert Event(content=content, long_running_tool_ids={"c1"}).is_final_response()


def test_empty_long_running_tool_ids_do_not_make_final() -> None:
    assert not Event(content=_model(_call("f")), long_running_tool_ids=set()).is_final_response()


def test_error_rule_precedes_the_function_response_rule() -> None:
    content = _model(_response("f"))
    assert not Event(content=content).is_final_response()
    assert Event(content=content, error_code="E1", partial=False).is_final_response()
    assert Event(content=content, error_code="E1").is_final_response()


def test_error_with_function_call_is_not_final() -> None:
    assert not Event(content=_model(_call("f")), error_code="E1").is_final_response()


def test_partial_error_is_not_final() -> None:
    event = Event(content=_model(types.Part(text="oops")), error_code="E1", partial=True)
    assert not event.is_final_response()


def test_error_without_content_is_final() -> None:
    assert Event(error_code="E1", error_message="boom").is_final_response()


@pytest.mark.parametrize("partial", [None, False])
def test_plain_text_non_partial_is_final(partial: bool | None) -> None:
    assert Event(content=_model(types.Part(text="done")), partial=partial).is_final_response()


def test_partial_text_is_not_final() -> None:
    assert not Event(content=_model(types.Part(text="do")), partial=True).is_final_response()


def test_function_call_is_not_final() -> None:
    assert not Event(content=_model(types.Part(text="calling"), _call("f"))).is_final_response()


def _code_result() -> types.Part:
    return types.Part(
        code_execution_result=types.CodeExecutionResult(outcome="OUTCOME_OK", output="1")
    )


def test_trailing_code_execution_result_is_not_final() -> None:
    event = Event(content=_model(types.Part(text="running"), _code_result()))
    assert event.has_trailing_code_execution_result()
    assert not event.is_final_response()


def test_code_execution_result_followed_by_text_is_final() -> None:
    event = Event(content=_model(_code_result(), types.Part(text="the answer is 1")))
    assert not event.has_trailing_code_execution_result()
    assert event.is_final_response()


# --------------------------------------------------------------------------------------
# json_values
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ((1, 2), "tuple"),
        ({1, 2}, "set"),
        (datetime(2026, 1, 1, tzinfo=UTC), "datetime"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        ({1: "x"}, "non-str key 1"),
        (b"raw", "bytes"),
    ],
)
def test_check_json_state_refuses_non_json_and_names_the_key(value: Any, kind: str) -> None:
    with pytest.raises(InvalidStateValueError) as info:
        check_json_state({"ok": [1, "x"], "bad_key": value}, where="the test state")
    assert info.value.key == "bad_key"
    message = str(info.value)
    assert "'bad_key'" in message
    assert "the test state" in message
    assert kind in message


def test_check_json_state_names_the_nested_path() -> None:
    with pytest.raises(InvalidStateValueError) as info:
        check_json_state({"k": {"a": [(1,), "fine"]}}, where="s")
    assert info.value.key == "k"
    assert info.value.path == "['a'][0]"
    assert "k['a'][0]" in str(info.value)
    assert "tuple" in str(info.value)


def test_check_json_state_refuses_non_str_top_level_key() -> None:
    with pytest.raises(InvalidStateValueError) as info:
        check_json_state({3: "x"}, where="s")  # type: ignore[dict-item]
    assert info.value.key == "3"


def test_invalid_state_value_error_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        check_json_state({"k": (1,)}, where="s")


def test_check_json_state_accepts_nested_plain_json() -> None:
    state = {
        "n": None,
        "b": True,
        "i": -3,
        "big": 10**30,
        "f": 1.5,
        "s": "x",
        "nested": {"list": [1, [2, {"deep": None}]], "empty": {}, "empty_list": []},
    }
    check_json_state(state, where="s")  # must not raise
    check_json_state({}, where="s")


def test_copy_json_is_a_deep_copy() -> None:
    original = {"a": [1, {"b": [2, 3]}], "c": {"d": "e"}}
    copy = copy_json(original)
    assert copy == original
    copy["a"][1]["b"].append(4)
    copy["c"]["d"] = "changed"
    copy["a"].append("new")
    copy["new"] = 1
    assert original == {"a": [1, {"b": [2, 3]}], "c": {"d": "e"}}
    assert copy["a"] is not original["a"]
    assert copy["a"][1] is not original["a"][1]


def test_isolation_scope_is_kept_and_stored_in_camel_case() -> None:
    from cairn.events import Event as _Event

    assert _Event().isolation_scope is None and "isolationScope" not in _Event().to_dict()
    scoped = _Event(isolation_scope="task:fc-1")
    assert scoped.to_dict()["isolationScope"] == "task:fc-1"
    assert _Event.model_validate_json(scoped.to_json()).isolation_scope == "task:fc-1"
