"""Re-run an eval case on recorded tool results while the agent does what it did before.

``RecordedToolsPlugin`` answers each tool call with the result recorded in the case's
expected invocations, as long as the agent's calls so far are the recorded ones (same
tools, same arguments, same order, across invocations). From the first call that is not,
every later call runs its live tool, and the plugin remembers where the run diverged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from google.genai import types as genai_types
from typing_extensions import override

from cairn.agents.context import Context
from cairn.events.interrupts import (
    AWAITING_CONFIRMATION,
    REQUEST_CONFIRMATION_FUNCTION,
)
from cairn.events.json_values import copy_json
from cairn.plugins.base_plugin import BasePlugin
from cairn.tools.base_tool import BaseTool

from .divergence import Divergence, DivergenceKind, format_call
from .eval_case import FRAMEWORK_PAUSE_CALLS, EvalCase, Invocation, InvocationEvents

_NOT_TOOLS = FRAMEWORK_PAUSE_CALLS
"""No tool runs for the framework's pause calls: not part of the trajectory a plugin sees."""

_ALWAYS_LIVE = frozenset({"transfer_to_agent", "exit_loop", "set_model_response"})
"""Tools whose effect is on the run itself (a transfer, leaving a loop, the structured
answer), not in their result: a recorded result would skip the effect, so they run live."""


@dataclass(frozen=True)
class _RecordedCall:
    call: genai_types.FunctionCall
    response: dict[str, Any] | None
    """The call's last recorded response (None: none was recorded, or only a placeholder)."""
    invocation_index: int
    event_index: int
    asked: bool
    """The call waited for a confirmation first (a recorded confirmation request names it)."""


def _recorded_calls(invocations: Sequence[Invocation]) -> list[_RecordedCall]:
    found: list[tuple[genai_types.FunctionCall, int, int]] = []
    responses: dict[str, dict[str, Any] | None] = {}
    asked: set[str] = set()
    for invocation_index, invocation in enumerate(invocations):
        data = invocation.intermediate_data
        if not isinstance(data, InvocationEvents):
            continue  # the hand-written shape has calls but no results to reuse
        for event_index, event in enumerate(data.invocation_events):
            for part in event.content.parts or [] if event.content is not None else []:
                call, response = part.function_call, part.function_response
                if call is not None and call.name not in _NOT_TOOLS:
                    found.append((call, invocation_index, event_index))
                if call is not None and call.name == REQUEST_CONFIRMATION_FUNCTION:
                    original = (call.args or {}).get("originalFunctionCall") or {}
                    if isinstance(original, dict) and original.get("id"):
                        asked.add(str(original["id"]))
                if response is not None and response.id:
                    # A confirmation's placeholder is not a result: the call waited for one.
                    placeholder = response.response == AWAITING_CONFIRMATION
                    responses[response.id] = None if placeholder else response.response
    return [
        _RecordedCall(
            call,
            responses.get(call.id or ""),
            invocation_index,
            event_index,
            asked=(call.id or "") in asked,
        )
        for call, invocation_index, event_index in found
    ]


class RecordedToolsPlugin(BasePlugin):
    """Answers tool calls with the results recorded in ``expected_invocations`` while the
    agent makes the recorded calls, in order; then lets the live tools run.

    One plugin follows one run of one eval case: make a new one for each run. A recorded
    result is the function response's ``response`` dict; what the tool did besides
    returning it (state changes, artifacts) is not replayed, so a case that relies on
    those should be re-run without this plugin. A recorded call without a result (a
    long-running tool answered by the user, a call still waiting for confirmation when
    the session was saved) runs live but keeps the trajectory matching; so do
    ``transfer_to_agent``, ``exit_loop`` and ``set_model_response``, whose effect is the
    point. A call that waited for a confirmation in the recording asks again (the case's
    recorded answer is the next turn), and once confirmed gets its recorded result: the
    replay has the recording's turns, pauses included.
    """

    def __init__(self, expected_invocations: list[Invocation], *, name: str = "recorded_tools"):
        super().__init__(name)
        self._recorded = _recorded_calls(expected_invocations)
        self._last_invocation = max(len(expected_invocations) - 1, 0)
        self._matched = 0
        self._call_ids: set[str] = set()
        self._asking: dict[str, _RecordedCall] = {}
        """Calls let through to ask for confirmation, by call id: their recorded result
        answers the confirmed re-run."""
        self.divergence: Divergence | None = None
        """Where the agent's calls first departed from the recorded ones (None: they have
        not). Its positions are those of the recorded call it was compared with in the
        expected invocations; for a call beyond the recorded ones, the last invocation and
        no event."""
        self.reused_calls = 0
        """How many calls were answered with a recorded result."""

    @override
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict[str, Any] | None:
        call_id = tool_context.function_call_id
        if call_id:
            if call_id in self._call_ids:
                # The same call run again (approved, or given its credential).
                confirmed = self._asking.pop(call_id, None)
                if confirmed is None or confirmed.response is None or self.divergence:
                    return None
                self.reused_calls += 1
                result: dict[str, Any] = copy_json(confirmed.response)
                return result
            self._call_ids.add(call_id)
        if self.divergence is not None:
            return None
        actual = genai_types.FunctionCall(name=tool.name, args=tool_args)
        if self._matched >= len(self._recorded):
            self.divergence = Divergence(
                invocation_index=self._last_invocation,
                event_index=None,
                kind=DivergenceKind.EXTRA_TOOL_CALL,
                expected="no more tool calls",
                actual=format_call(actual),
            )
            return None
        recorded = self._recorded[self._matched]
        if recorded.call.name != tool.name or (recorded.call.args or {}) != tool_args:
            self.divergence = Divergence(
                invocation_index=recorded.invocation_index,
                event_index=recorded.event_index,
                kind=DivergenceKind.TOOL_CALL,
                expected=format_call(recorded.call),
                actual=format_call(actual),
            )
            return None
        self._matched += 1
        if recorded.asked and call_id:
            self._asking[call_id] = recorded
            return None  # ask as the recording did; the confirmed re-run gets the result
        if recorded.response is None or tool.name in _ALWAYS_LIVE:
            return None
        self.reused_calls += 1
        reused: dict[str, Any] = copy_json(recorded.response)
        return reused


def recorded_tools_for(case: EvalCase) -> list[BasePlugin]:
    """The plugins a case runs with to reuse its recorded tool results (``LocalEvalService``'s
    ``plugins_for_case``): one ``RecordedToolsPlugin`` of its conversation, none for a
    simulated-user case (it has no recording)."""
    return [RecordedToolsPlugin(case.conversation)] if case.conversation else []
