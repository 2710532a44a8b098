"""How typed or replayed answers become ``FunctionResponse.response`` values, and how a run's
values are cut to one line."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from cairn.cli._prompts import input_value, json_or_text, response_for
from cairn.cli._render import call_summary, compact
from cairn.events.interrupts import Interrupt, InterruptKind


def interrupt(kind: InterruptKind, payload: Any = None) -> Interrupt:
    return Interrupt(
        id="i-1",
        kind=kind,
        name="n",
        invocation_id="e-1",
        author="a",
        payload=payload,
        event_id="ev-1",
        timestamp=0.0,
    )


def test_input_text_is_tried_as_json_then_as_a_string() -> None:
    assert input_value("yes", None) == ("yes", None)
    assert input_value('{"a": 1}', None) == ('{"a": 1}', None)  # no schema: the text itself
    assert input_value("3", {"type": "integer"}) == (3, None)
    assert input_value("3", {"type": "string"}) == ("3", None)
    assert input_value('"quoted"', {"type": "string"}) == ("quoted", None)
    value, problem = input_value("x", {"type": "integer"})
    assert value is None and problem == "(the answer): 'x' is not of type 'integer'"


@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [
        ("input", "yes", {"result": "yes"}),
        ("input", [1, 2], {"result": [1, 2]}),
        ("input", {"verdict": "send"}, {"verdict": "send"}),
        ("confirmation", True, {"confirmed": True}),
        ("confirmation", {"confirmed": False}, {"confirmed": False}),
        ("long_running", "done", {"result": "done"}),
        ("long_running", {"approved": True}, {"approved": True}),
        ("in_doubt", "rerun", {"rerun": True}),
        ("in_doubt", {"charged": 30}, {"result": {"charged": 30}}),
        ("in_doubt", {"result": 1}, {"result": 1}),
    ],
)
def test_response_for_each_kind(kind: InterruptKind, value: Any, expected: Any) -> None:
    assert response_for(interrupt(kind), value) == expected


def test_a_credential_alone_is_filled_into_the_asked_config() -> None:
    asked = {"authScheme": {"type": "apiKey", "in": "header", "name": "X-Key"}}
    key = {"authType": "apiKey", "apiKey": "k"}
    assert response_for(interrupt("credential", asked), key) == {
        **asked,
        "exchangedAuthCredential": key,
    }
    whole = {**asked, "exchangedAuthCredential": key}
    assert response_for(interrupt("credential", asked), whole) == whole


def test_json_or_text() -> None:
    assert json_or_text("[1]") == [1]
    assert json_or_text("not json") == "not json"


def test_values_are_cut_to_one_line() -> None:
    assert compact({"a": "x\ny"}) == '{"a": "x\\ny"}'
    assert compact("a\n  b") == "a b"
    long = compact("x" * 500, limit=20)
    assert len(long) == 20 and long.endswith("…")
    call = types.FunctionCall(name="pay", args={"amount": 40, "to": "Ann"})
    assert call_summary(call) == "pay(amount=40, to='Ann')"
