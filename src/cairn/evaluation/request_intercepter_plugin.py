"""A plugin that keeps, per invocation and agent, what the agent was shown and how long its
model and tool calls took: what the evaluator needs beyond the events.

Nothing it keeps is written to the session: ADK tags responses and state with a request
key; cairn keeps the requests beside the run instead, so an eval session's log holds only
what the agent did.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from cairn.agents.context import Context
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.plugins.base_plugin import BasePlugin
from cairn.tools.base_tool import BaseTool

from .app_details import AgentDetails, AppDetails

_Interval = tuple[float, float]


def _busy_seconds(intervals: list[_Interval]) -> float:
    """The length of the union of ``intervals`` (overlapping calls count once)."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def _minus(intervals: list[_Interval], removed: list[_Interval]) -> list[_Interval]:
    """``intervals`` with every moment covered by ``removed`` cut out."""
    result: list[_Interval] = []
    for start, stop in intervals:
        pieces = [(start, stop)]
        for cut_start, cut_stop in removed:
            pieces = [
                piece
                for low, high in pieces
                for piece in ((low, min(high, cut_start)), (max(low, cut_stop), high))
                if piece[1] > piece[0]
            ]
        result.extend(pieces)
    return result


def _text(instruction: Any) -> str:
    if instruction is None:
        return ""
    if isinstance(instruction, str):
        return instruction
    parts = getattr(instruction, "parts", None) or []
    return "\n".join(part.text for part in parts if getattr(part, "text", None))


class _RequestIntercepterPlugin(BasePlugin):
    """Records each agent's first model request and the model and tool call intervals of
    every invocation, for ``app_details`` and the duration fields of eval invocations."""

    def __init__(self, name: str = "request_intercepter_plugin") -> None:
        super().__init__(name=name)
        self._details: dict[tuple[str, str], AgentDetails] = {}
        self._model_started: dict[int, tuple[str, float]] = {}
        self._tool_started: dict[int, tuple[str, float]] = {}
        self._model_intervals: dict[str, list[_Interval]] = {}
        self._tool_intervals: dict[str, list[_Interval]] = {}

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        key = (callback_context.invocation_id, callback_context.agent_name)
        if key not in self._details:
            # Only what app_details reads, copied as it is now: not the whole request (its
            # tools_dict holds the tool objects, an AgentTool's whole agent among them), and
            # only on the agent's first model call of the invocation.
            self._details[key] = AgentDetails(
                name=callback_context.agent_name,
                instructions=_text(llm_request.config.system_instruction),
                tool_declarations=copy.deepcopy(llm_request.config.tools or []),
            )
        # A call's hooks share its context; an agent's model calls follow one another.
        self._model_started[id(callback_context)] = (
            callback_context.invocation_id,
            time.monotonic(),
        )
        return None

    async def after_model_callback(
        self, *, callback_context: Context, llm_response: LlmResponse
    ) -> LlmResponse | None:
        if not llm_response.partial:
            self._end(self._model_started, id(callback_context), self._model_intervals)
        return None

    async def on_model_error_callback(
        self, *, callback_context: Context, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        self._end(self._model_started, id(callback_context), self._model_intervals)
        return None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict[str, Any] | None:
        self._tool_started[id(tool_context)] = (tool_context.invocation_id, time.monotonic())
        return None

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        self._end(self._tool_started, id(tool_context), self._tool_intervals)
        return None

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        error: Exception,
    ) -> dict[str, Any] | None:
        self._end(self._tool_started, id(tool_context), self._tool_intervals)
        return None

    @staticmethod
    def _end(
        started: dict[int, tuple[str, float]], key: int, into: dict[str, list[_Interval]]
    ) -> None:
        begun = started.pop(key, None)
        if begun is not None:
            invocation_id, start = begun
            into.setdefault(invocation_id, []).append((start, time.monotonic()))

    def app_details(self, invocation_id: str, authors: list[str]) -> AppDetails:
        """The instructions and tools each of ``authors`` was given in the invocation."""
        details = AppDetails(agent_details={})
        for author in authors:
            agent = self._details.get((invocation_id, author))
            if agent is None or author in details.agent_details:
                continue
            details.agent_details[author] = agent
        return details

    def model_seconds(self, invocation_id: str) -> float:
        """Seconds with a model call of the invocation in flight."""
        return _busy_seconds(self._model_intervals.get(invocation_id, []))

    def tool_seconds(self, invocation_id: str) -> float:
        """Seconds inside the invocation's tools, less the time those tools awaited a model
        (an agent used as a tool)."""
        tools = self._tool_intervals.get(invocation_id, [])
        models = self._model_intervals.get(invocation_id, [])
        return _busy_seconds(_minus(tools, models))
