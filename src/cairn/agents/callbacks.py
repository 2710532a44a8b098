"""The shapes of an LLM agent's callbacks, by ADK's names (for annotating an app's own).

Each is one callable or a list of them, tried in order until one returns something that
is not None. A callback may be sync or async.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from cairn.agents.context import Context
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.tools.base_tool import BaseTool

_ModelAnswer: TypeAlias = LlmResponse | Awaitable[LlmResponse | None] | None
_ToolAnswer: TypeAlias = dict[str, Any] | Awaitable[dict[str, Any] | None] | None

_BeforeModel: TypeAlias = Callable[[Context, LlmRequest], _ModelAnswer]
_AfterModel: TypeAlias = Callable[[Context, LlmResponse], _ModelAnswer]
_OnModelError: TypeAlias = Callable[[Context, LlmRequest, Exception], _ModelAnswer]
_BeforeTool: TypeAlias = Callable[[BaseTool, dict[str, Any], Context], _ToolAnswer]
_AfterTool: TypeAlias = Callable[[BaseTool, dict[str, Any], Context, dict[str, Any]], _ToolAnswer]
_OnToolError: TypeAlias = Callable[[BaseTool, dict[str, Any], Context, Exception], _ToolAnswer]

BeforeModelCallback: TypeAlias = _BeforeModel | list[_BeforeModel]
"""Sees the request before it is sent; a response returned is used instead of the model's."""
AfterModelCallback: TypeAlias = _AfterModel | list[_AfterModel]
"""Sees the model's response; a response returned replaces it."""
OnModelErrorCallback: TypeAlias = _OnModelError | list[_OnModelError]
"""Sees a failed model call; a response returned is used instead of the error."""
BeforeToolCallback: TypeAlias = _BeforeTool | list[_BeforeTool]
"""Sees a tool's arguments before it runs; a dict returned is used as its result instead."""
AfterToolCallback: TypeAlias = _AfterTool | list[_AfterTool]
"""Sees a tool's result; a dict returned replaces it."""
OnToolErrorCallback: TypeAlias = _OnToolError | list[_OnToolError]
"""Sees a tool's exception; a dict returned is used as its result instead of the error."""

__all__ = [
    "AfterModelCallback",
    "AfterToolCallback",
    "BeforeModelCallback",
    "BeforeToolCallback",
    "OnModelErrorCallback",
    "OnToolErrorCallback",
]
