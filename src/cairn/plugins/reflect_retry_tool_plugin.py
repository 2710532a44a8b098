"""ReflectAndRetryToolPlugin: a failed tool call becomes guidance for the model to try again.

Instead of an error, the model gets a ``ToolFailureResponse`` (what failed, with which
arguments, which attempt this is) and calls again, up to ``max_retries`` failures in a row
per tool; after that the error is raised (or, with ``throw_exception_if_retry_exceeded=
False``, the model is told to stop using the tool). The count is read from the log
(``cairn.plugins.failure_counts``), so it survives a restart: a resumed invocation goes on
counting where it stopped, in any process.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import BaseModel

from cairn.agents.context import Context
from cairn.plugins.base_plugin import BasePlugin
from cairn.plugins.failure_counts import (
    GLOBAL_SCOPE_KEY,
    REFLECT_AND_RETRY_RESPONSE_TYPE,
    InFlight,
    TrackingScope,
    scope_key,
    tool_failures,
)
from cairn.tools.base_tool import BaseTool

PerToolFailuresCounter = dict[str, int]
"""Failures in a row, by tool name (ADK's name for the per-scope counter)."""

__all__ = [
    "GLOBAL_SCOPE_KEY",
    "PerToolFailuresCounter",
    "ReflectAndRetryToolPlugin",
    "ToolFailureResponse",
    "TrackingScope",
]


class ToolFailureResponse(BaseModel):
    """What the model is given instead of a failed call's error."""

    response_type: str = REFLECT_AND_RETRY_RESPONSE_TYPE
    error_type: str = ""
    error_details: str = ""
    retry_count: int = 0
    reflection_guidance: str = ""


class ReflectAndRetryToolPlugin(BasePlugin):
    """Turns tool errors into reflection guidance and lets the model retry.

    ``extract_error_from_result`` (override it) finds errors in results that did not
    raise, e.g. ``{"status": "error"}``. ``tracking_scope`` chooses what a count spans:
    the invocation (default) or the whole session (``TrackingScope.GLOBAL``).
    """

    def __init__(
        self,
        name: str = "reflect_retry_tool_plugin",
        max_retries: int = 3,
        throw_exception_if_retry_exceeded: bool = True,
        tracking_scope: TrackingScope = TrackingScope.INVOCATION,
    ) -> None:
        super().__init__(name)
        if max_retries < 0:
            raise ValueError(
                f"max_retries must be a non-negative integer, got {max_retries} "
                "(0 means no retries)"
            )
        self.max_retries = max_retries
        self.throw_exception_if_retry_exceeded = throw_exception_if_retry_exceeded
        self.scope = tracking_scope
        self._in_flight = InFlight()

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: Any,
    ) -> dict[str, Any] | None:
        if isinstance(result, dict) and result.get("response_type") == (
            REFLECT_AND_RETRY_RESPONSE_TYPE
        ):
            return None  # our own answer to an error, given by on_tool_error_callback
        error = await self.extract_error_from_result(
            tool=tool, tool_args=tool_args, tool_context=tool_context, result=result
        )
        if error:
            return await self._handle_tool_error(tool, tool_args, tool_context, error)
        self._in_flight.forget((self._get_scope_key(tool_context), tool.name))
        return None

    async def extract_error_from_result(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: Any,
    ) -> dict[str, Any] | None:
        """Override: the error a result that did not raise reports, or None (the default:
        only raised errors count)."""
        return None

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        error: Exception,
    ) -> dict[str, Any] | None:
        if isinstance(error, asyncio.CancelledError):
            return None
        return await self._handle_tool_error(tool, tool_args, tool_context, error)

    async def _handle_tool_error(
        self, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context, error: Any
    ) -> dict[str, Any] | None:
        if self.max_retries == 0:
            if self.throw_exception_if_retry_exceeded:
                raise _as_exception(error)
            return self._get_tool_retry_exceed_msg(tool, tool_args, error)
        events = tool_context.session.events
        logged = tool_failures(events, self.scope, tool_context.invocation_id, tool.name)
        key = (self._get_scope_key(tool_context), tool.name)
        count = self._in_flight.next_count(key, logged, len(events))
        if count <= self.max_retries:
            return self._create_tool_reflection_response(tool, tool_args, error, count)
        if self.throw_exception_if_retry_exceeded:
            raise _as_exception(error)
        return self._get_tool_retry_exceed_msg(tool, tool_args, error)

    def _get_scope_key(self, tool_context: Context) -> str:
        return scope_key(self.scope, tool_context.invocation_id)

    def _create_tool_reflection_response(
        self, tool: BaseTool, tool_args: dict[str, Any], error: Any, retry_count: int
    ) -> dict[str, Any]:
        guidance = (
            f"Calling the tool `{tool.name}` failed.\n\n"
            f"Error:\n```\n{_describe(error)}\n```\n\n"
            f"Arguments you used:\n```json\n{_render(tool_args)}\n```\n\n"
            f"This is retry {retry_count} of {self.max_retries}. Work out why it failed "
            "before you call again, and do not repeat the same call unchanged. Check: are "
            "the arguments valid, well formed and complete for the tool's schema? Did an "
            "earlier step leave what this tool needs? Is another tool, or another order of "
            "steps, a better way? Can the task be split into smaller steps? If the tool was "
            "not found, use only the tools you have.\n\n"
            "Then make a corrected or different attempt."
        )
        return ToolFailureResponse(
            error_type=_error_type(error),
            error_details=str(error),
            retry_count=retry_count,
            reflection_guidance=guidance,
        ).model_dump(mode="json")

    def _get_tool_retry_exceed_msg(
        self, tool: BaseTool, tool_args: dict[str, Any], error: Any
    ) -> dict[str, Any]:
        guidance = (
            f"The tool `{tool.name}` failed {self.max_retries} times in a row: its retry "
            "limit is reached.\n\n"
            f"Last error:\n```\n{_describe(error)}\n```\n\n"
            f"Last arguments:\n```json\n{_render(tool_args)}\n```\n\n"
            f"Do not call `{tool.name}` again for this task. Take another approach: other "
            "tools, or tell the user that the task cannot be done this way."
        )
        return ToolFailureResponse(
            error_type=_error_type(error),
            error_details=str(error),
            retry_count=self.max_retries,
            reflection_guidance=guidance,
        ).model_dump(mode="json")


def _as_exception(error: Any) -> Exception:
    return error if isinstance(error, Exception) else Exception(str(error))


def _error_type(error: Any) -> str:
    return type(error).__name__ if isinstance(error, Exception) else "ToolError"


def _describe(error: Any) -> str:
    return f"{type(error).__name__}: {error}" if isinstance(error, Exception) else str(error)


def _render(args: dict[str, Any]) -> str:
    return json.dumps(args, indent=2, default=str)
