"""The interface of everything an LLM agent can call."""

from __future__ import annotations

import abc
import copy
import inspect
from collections.abc import Callable
from typing import Any

from google.genai import types

from cairn.models.llm_request import LlmRequest
from cairn.user_code import call_user_code

CONTEXT_TYPE_NAMES = frozenset({"Context", "ToolContext", "CallbackContext"})
"""Annotations that mark the parameter receiving a call's context."""


def is_context_annotation(annotation: Any) -> bool:
    """Whether a parameter annotated so receives the call's context (ToolContext & co)."""
    return getattr(annotation, "__name__", None) in CONTEXT_TYPE_NAMES or (
        isinstance(annotation, str) and annotation.split(".")[-1] in CONTEXT_TYPE_NAMES
    )


class BaseTool(abc.ABC):
    """A named capability a model can call with JSON arguments.

    ``tool_context`` is the ``cairn.ToolContext`` of the call: its state writes
    and actions travel on the function-response event.
    """

    name: str
    description: str
    is_long_running: bool = False
    """The call may finish later, outside this invocation (it then pauses)."""
    require_confirmation: bool | Callable[..., Any] = False
    """Ask a human before each call: True, or a predicate (may be async) called as ADK
    calls it: the call's arguments as keywords, plus its context if the predicate has a
    ``tool_context`` (or ``ToolContext``-annotated) parameter or ``**kwargs``, e.g.
    ``def large(amount: int) -> bool``."""
    idempotent: bool = False
    """Running a call twice has the effect of running it once. A call whose process died
    before its result was recorded is then simply run again on resume; otherwise the
    invocation pauses and asks the caller what to do (the call is "in doubt")."""

    def __init__(
        self,
        *,
        name: str,
        description: str,
        is_long_running: bool = False,
        require_confirmation: bool | Callable[..., Any] = False,
        idempotent: bool = False,
    ) -> None:
        self.name = name
        self.description = description
        self.is_long_running = is_long_running
        self.require_confirmation = require_confirmation
        self.idempotent = idempotent

    def declaration(self) -> types.FunctionDeclaration | None:
        """How the tool is described to the model (None: the model does not see it)."""
        return None

    async def check_require_confirmation(self, args: dict[str, Any], tool_context: Any) -> bool:
        """Whether this call waits for a human's approval (``require_confirmation``)."""
        rule = self.require_confirmation
        if not callable(rule):
            return bool(rule)
        return bool(await call_user_code(rule, **_keywords_for(rule, args, tool_context)))

    @abc.abstractmethod
    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        """Run the call; the result goes back to the model as the function response."""

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        """Add this tool to a request (override to add instructions or settings as well)."""
        llm_request.append_tools([self])


class BaseToolset(abc.ABC):
    """A group of tools resolved when a request is built (e.g. an MCP server's tools).

    ``tool_filter`` keeps only the named tools (or those a predicate accepts);
    ``tool_name_prefix`` renames each tool to ``<prefix>_<name>`` for the model (the
    filter still names the tools as the toolset does), so that two toolsets with
    tools of the same name can serve one agent.
    """

    def __init__(
        self, *, tool_filter: list[str] | Any = None, tool_name_prefix: str | None = None
    ) -> None:
        self.tool_filter = tool_filter
        self.tool_name_prefix = tool_name_prefix

    @abc.abstractmethod
    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        """The tools available now."""

    async def get_tools_with_prefix(self, readonly_context: Any = None) -> list[BaseTool]:
        """The selected tools, named with ``tool_name_prefix`` if there is one (copies: the
        toolset's own tools keep their names)."""
        tools = [
            tool
            for tool in await self.get_tools(readonly_context)
            if self._is_selected(tool, readonly_context)
        ]
        if not self.tool_name_prefix:
            return tools
        return [_renamed(tool, f"{self.tool_name_prefix}_{tool.name}") for tool in tools]

    def _is_selected(self, tool: BaseTool, readonly_context: Any = None) -> bool:
        if self.tool_filter is None:
            return True
        if isinstance(self.tool_filter, list):
            return tool.name in self.tool_filter
        return bool(self.tool_filter(tool, readonly_context))

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections (called when the owning Runner closes)."""


def _renamed(tool: BaseTool, name: str) -> BaseTool:
    """A shallow copy of ``tool`` called ``name``, declared to the model under that name."""
    renamed = copy.copy(tool)
    renamed.name = name
    declare = tool.declaration

    def declaration() -> types.FunctionDeclaration | None:
        found = declare()
        return None if found is None else found.model_copy(update={"name": name})

    renamed.declaration = declaration  # type: ignore[method-assign]
    return renamed


def _keywords_for(func: Callable[..., Any], args: dict[str, Any], context: Any) -> dict[str, Any]:
    """The keywords ``func`` accepts out of a call's ``args`` and its ``tool_context``."""
    try:
        parameters = inspect.signature(func).parameters
    except (TypeError, ValueError):  # no signature to read (a builtin): the arguments only
        return dict(args)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return {**args, "tool_context": context}
    keywords = {name: value for name, value in args.items() if name in parameters}
    for name, parameter in parameters.items():
        if name == "tool_context" or is_context_annotation(parameter.annotation):
            keywords[name] = context
    return keywords
