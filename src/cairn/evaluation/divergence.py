"""Where an agent's run first departed from the recorded one: the first differing step.

Invocations are compared in order: first their tool calls (name and arguments, ids
ignored; then which agent made the call, when both sides record it), then their final
responses' text (whitespace normalized). The first difference is reported, with short
readable strings of both sides, for reports and for ``RecordedToolsPlugin``.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from google.genai import types as genai_types

from .eval_case import FRAMEWORK_PAUSE_CALLS, IntermediateData, Invocation, InvocationEvents

_SHORT = 80
"""Longest readable string of a text or argument value, in characters."""


class DivergenceKind(enum.StrEnum):
    """What differs at the first difference."""

    TOOL_CALL = "tool_call"
    """Both made a tool call here, with another name or other arguments."""
    MISSING_TOOL_CALL = "missing_tool_call"
    """The recorded run made a tool call here; the actual run made no more calls."""
    EXTRA_TOOL_CALL = "extra_tool_call"
    """The actual run made a tool call the recorded run did not make."""
    FINAL_RESPONSE = "final_response"
    """The same tool calls, but another final response text."""
    MISSING_INVOCATION = "missing_invocation"
    """The recorded run has an invocation (turn) that the actual run lacks."""
    EXTRA_INVOCATION = "extra_invocation"
    """The actual run has an invocation (turn) that the recorded run lacks."""
    AUTHOR = "author"
    """The same tool call, made by another agent."""


@dataclass(frozen=True)
class Divergence:
    """The first difference between two runs.

    ``invocation_index`` and ``event_index`` count from 0. ``event_index`` is the position
    in the invocation's intermediate events (or in ``tool_uses`` for the hand-written
    shape) of the differing call: the actual run's event, except for a
    ``missing_tool_call``, where only the recorded run has one. It is None for a final
    response and for a missing or extra invocation.
    """

    invocation_index: int
    event_index: int | None
    kind: DivergenceKind
    expected: str
    actual: str

    def describe(self) -> str:
        """One line for a report; invocations and events are numbered from 1 there."""
        where = f"invocation {self.invocation_index + 1}"
        if self.event_index is not None:
            where += f", event {self.event_index + 1}"
        elif self.kind is DivergenceKind.FINAL_RESPONSE:
            where += ", final response"
        return f"{where}: expected {self.expected}, got {self.actual}"


@dataclass(frozen=True)
class _Step:
    """A tool call, where it is in its invocation and who made it (None: not recorded)."""

    call: genai_types.FunctionCall
    event_index: int
    author: str | None


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    shown = repr(text) if isinstance(value, str) else text
    return shown if len(shown) <= _SHORT else shown[: _SHORT - 3] + "..."


def format_call(call: genai_types.FunctionCall) -> str:
    """``name(key='value', n=1)``: a tool call as a report shows it (values shortened)."""
    args = ", ".join(f"{key}={_short(value)}" for key, value in (call.args or {}).items())
    return f"{call.name}({args})"


def _steps(invocation: Invocation) -> list[_Step]:
    data = invocation.intermediate_data
    if isinstance(data, IntermediateData):
        return [_Step(call, index, None) for index, call in enumerate(data.tool_uses)]
    if not isinstance(data, InvocationEvents):
        return []
    return [
        _Step(part.function_call, index, event.author)
        for index, event in enumerate(data.invocation_events)
        if event.content is not None
        for part in event.content.parts or []
        if part.function_call is not None and part.function_call.name not in FRAMEWORK_PAUSE_CALLS
    ]


def _same_call(expected: genai_types.FunctionCall, actual: genai_types.FunctionCall) -> bool:
    return expected.name == actual.name and (expected.args or {}) == (actual.args or {})


def response_text(content: genai_types.Content | None) -> str:
    """The text of a final response, whitespace runs made one space (thoughts left out)."""
    if content is None:
        return ""
    text = " ".join(part.text for part in content.parts or [] if part.text and not part.thought)
    return " ".join(text.split())


def _user_text(invocation: Invocation) -> str:
    text = response_text(invocation.user_content)
    if text:
        return f"a turn with user message {_short(text)}"
    answers = [
        part.function_response.name or ""
        for part in invocation.user_content.parts or []
        if part.function_response is not None
    ]
    return f"a turn answering {', '.join(answers)}" if answers else "a turn"


def _in_invocation(index: int, expected: Invocation, actual: Invocation) -> Divergence | None:
    want, got = _steps(expected), _steps(actual)
    for position in range(max(len(want), len(got))):
        if position >= len(got):
            step = want[position]
            return Divergence(
                invocation_index=index,
                event_index=step.event_index,
                kind=DivergenceKind.MISSING_TOOL_CALL,
                expected=format_call(step.call),
                actual="no more tool calls",
            )
        if position >= len(want):
            step = got[position]
            return Divergence(
                invocation_index=index,
                event_index=step.event_index,
                kind=DivergenceKind.EXTRA_TOOL_CALL,
                expected="no more tool calls",
                actual=format_call(step.call),
            )
        w, g = want[position], got[position]
        if not _same_call(w.call, g.call):
            return Divergence(
                invocation_index=index,
                event_index=g.event_index,
                kind=DivergenceKind.TOOL_CALL,
                expected=format_call(w.call),
                actual=format_call(g.call),
            )
        if w.author is not None and g.author is not None and w.author != g.author:
            call = format_call(g.call)
            return Divergence(
                invocation_index=index,
                event_index=g.event_index,
                kind=DivergenceKind.AUTHOR,
                expected=f"{call} by {w.author!r}",
                actual=f"{call} by {g.author!r}",
            )
    want_text = response_text(expected.final_response)
    got_text = response_text(actual.final_response)
    if want_text != got_text:
        return Divergence(
            invocation_index=index,
            event_index=None,
            kind=DivergenceKind.FINAL_RESPONSE,
            expected=_short(want_text),
            actual=_short(got_text),
        )
    return None


def first_divergence(
    expected: Sequence[Invocation], actual: Sequence[Invocation]
) -> Divergence | None:
    """The first place where ``actual`` departs from ``expected``, or None when they agree.

    Invocations are paired in order. Within a pair, tool calls are compared position by
    position (name and arguments; call ids ignored), then the final response text; an
    invocation only one side has is a missing or an extra invocation.
    """
    for index, (want, got) in enumerate(zip(expected, actual, strict=False)):
        found = _in_invocation(index, want, got)
        if found is not None:
            return found
    if len(expected) > len(actual):
        index = len(actual)
        return Divergence(
            invocation_index=index,
            event_index=None,
            kind=DivergenceKind.MISSING_INVOCATION,
            expected=_user_text(expected[index]),
            actual="no invocation",
        )
    if len(actual) > len(expected):
        index = len(expected)
        return Divergence(
            invocation_index=index,
            event_index=None,
            kind=DivergenceKind.EXTRA_INVOCATION,
            expected="no invocation",
            actual=_user_text(actual[index]),
        )
    return None
