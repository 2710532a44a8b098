"""The interface of everything an LLM agent can call."""

from __future__ import annotations

import abc
import copy
import inspect
import types as types_module
import typing
from collections.abc import Callable
from typing import Any, Protocol, Self, get_type_hints

from google.genai import types
from pydantic import BaseModel

from cairn.models.llm_request import LlmRequest, declaration_of
from cairn.tools.code_references import resolve_fully_qualified_name
from cairn.tools.tool_configs import ToolArgsConfig
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

    _defers_response: bool = False
    """ADK's flag for a tool whose response comes later (as a long-running one's)."""

    def declaration(self) -> types.FunctionDeclaration | None:
        """How the tool is described to the model (None: the model does not see it).

        Override this, or ``_get_declaration`` as ADK tools do: by default this is what
        ``_get_declaration`` returns."""
        return self._get_declaration()

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        """ADK's name for the declaration hook (ADK tools override it): the declaration."""
        if type(self).declaration is not BaseTool.declaration:
            return type(self).declaration(self)
        return None

    async def check_require_confirmation(self, args: dict[str, Any], tool_context: Any) -> bool:
        """Whether this call waits for a human's approval (``require_confirmation``)."""
        rule = self.require_confirmation
        if not callable(rule):
            return bool(rule)
        return bool(await call_user_code(rule, **_keywords_for(rule, args, tool_context)))

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        """Run the call; the result goes back to the model as the function response."""
        raise NotImplementedError(
            f"tool {self.name!r} ({type(self).__name__}) has no run_async; define one"
        )

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        """Add this tool to a request (override to add instructions or settings as well)."""
        llm_request.append_tools([self])

    @classmethod
    def from_config(cls, config: ToolArgsConfig, config_abs_path: str) -> Self:
        """The tool an agent config's ``tools: [{name: ThisClass, args: {...}}]`` makes
        (ADK's hook): by default the constructor's keywords, taken from ``args``, with a
        parameter typed as a pydantic model validated into it and one typed as a callable
        given a fully qualified name. Tools with their own config schema override this."""
        return cls(**keywords_from_args(cls, config))


def keywords_from_args(cls: type, config: ToolArgsConfig) -> dict[str, Any]:
    """``cls``'s constructor keywords from a ``ToolConfig``'s ``args`` (see
    ``BaseTool.from_config``); an argument the constructor does not take is refused."""
    given = dict(config.model_extra or {})
    init = cls.__dict__.get("__init__") or next(
        c.__dict__["__init__"] for c in cls.__mro__ if "__init__" in c.__dict__
    )
    parameters = inspect.signature(init).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    named = {n for n, p in parameters.items() if n != "self" and p.kind is not p.VAR_KEYWORD}
    unknown = sorted(set(given) - named)
    if unknown and not takes_any:
        raise ValueError(
            f"{cls.__name__} takes no argument {', '.join(map(repr, unknown))}; its arguments "
            f"are {', '.join(sorted(named)) or 'none'}"
        )
    try:
        hints = get_type_hints(init)
    except Exception:  # annotations that do not resolve: take the values as they are
        hints = {}
    keywords: dict[str, Any] = {}
    for key, value in given.items():
        annotation = _unoptional(hints.get(key))
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            value = annotation.model_validate(value) if value is not None else None
        elif _is_callable_type(annotation) and isinstance(value, str):
            value = resolve_fully_qualified_name(value)
        keywords[key] = value
    return keywords


def _unoptional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types_module.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation


def _is_callable_type(annotation: Any) -> bool:
    return annotation is Callable or typing.get_origin(annotation) is Callable


class ToolPredicate(Protocol):
    """Decides whether a toolset offers ``tool`` to the model now (ADK's name): a toolset's
    ``tool_filter`` may be one, instead of a list of tool names."""

    def __call__(self, tool: BaseTool, readonly_context: Any = None) -> bool: ...


class BaseToolset(abc.ABC):
    """A group of tools resolved when a request is built (e.g. an MCP server's tools).

    ``tool_filter`` keeps only the named tools (or those a predicate accepts);
    ``tool_name_prefix`` renames each tool to ``<prefix>_<name>`` for the model (the
    filter still names the tools as the toolset does), so that two toolsets with
    tools of the same name can serve one agent.
    """

    def __init__(
        self,
        *,
        tool_filter: ToolPredicate | Callable[[BaseTool, Any], bool] | list[str] | None = None,
        tool_name_prefix: str | None = None,
    ) -> None:
        self.tool_filter = tool_filter
        self.tool_name_prefix = tool_name_prefix
        self._use_invocation_cache = True
        """As ADK: the tools listed once per invocation (False: listed at every request)."""
        self._cached: tuple[str | None, list[BaseTool]] | None = None

    @abc.abstractmethod
    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        """The tools available now."""

    async def get_tools_with_prefix(self, readonly_context: Any = None) -> list[BaseTool]:
        """The selected tools, named with ``tool_name_prefix`` if there is one (copies: the
        toolset's own tools keep their names). Listed once per invocation, as in ADK."""
        invocation_id = getattr(readonly_context, "invocation_id", None)
        if self._use_invocation_cache and self._cached and self._cached[0] == invocation_id:
            return self._cached[1]
        tools = self._apply_tool_name_prefix(
            [
                tool
                for tool in await self.get_tools(readonly_context)
                if self._is_selected(tool, readonly_context)
            ]
        )
        self._cached = (invocation_id, tools)
        return tools

    def _apply_tool_name_prefix(self, tools: list[BaseTool]) -> list[BaseTool]:
        """``tools`` renamed with ``tool_name_prefix`` (copies), or as they are without one."""
        if not self.tool_name_prefix:
            return tools
        return [_renamed(tool, f"{self.tool_name_prefix}_{tool.name}") for tool in tools]

    def _is_selected(self, tool: BaseTool, readonly_context: Any = None) -> bool:
        if self.tool_filter is None:
            return True
        if isinstance(self.tool_filter, list):
            return tool.name in self.tool_filter
        return bool(self.tool_filter(tool, readonly_context))

    async def process_llm_request(  # noqa: B027 - optional hook
        self, *, tool_context: Any, llm_request: LlmRequest
    ) -> None:
        """Edit a request before the toolset's tools add themselves (default: nothing)."""

    async def on_tools_listing_error(
        self, error: Exception, readonly_context: Any = None
    ) -> list[BaseTool]:
        """Tools to offer when ``get_tools`` failed with ``error`` (e.g. one that asks the
        user to authorize the server); none by default."""
        return []

    async def fallback_tools(
        self, error: Exception, readonly_context: Any = None
    ) -> list[BaseTool]:
        """``on_tools_listing_error``'s tools, named with ``tool_name_prefix``."""
        return self._apply_tool_name_prefix(
            await self.on_tools_listing_error(error, readonly_context)
        )

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections (called when the owning Runner closes)."""

    @classmethod
    def from_config(cls, config: ToolArgsConfig, config_abs_path: str) -> Self:
        """The toolset an agent config's ``tools: [{name: ThisClass, args: {...}}]`` makes
        (ADK's hook). Toolsets with a config schema override this (``McpToolset``); others
        are built in Python and named by reference in the config."""
        raise ValueError(
            f"{cls.__name__} cannot be built from an agent config's args; build it in Python "
            "(e.g. `my_toolset = ...` in tools.py) and name that object in the config "
            "(`- name: my_agent.tools.my_toolset`)"
        )


def _renamed(tool: BaseTool, name: str) -> BaseTool:
    """A shallow copy of ``tool`` called ``name``, declared to the model under that name."""
    renamed = copy.copy(tool)
    renamed.name = name

    def renamed_declaration() -> types.FunctionDeclaration | None:
        found = declaration_of(tool)
        return None if found is None else found.model_copy(update={"name": name})

    # On the instance, as ADK renames: a tool may keep a field named ``declaration``.
    renamed._get_declaration = renamed_declaration  # type: ignore[method-assign]
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
