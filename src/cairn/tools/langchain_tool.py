"""``LangchainTool``: a LangChain tool (``langchain_core.tools.BaseTool``) as a cairn tool.

Needs ``langchain-core`` (``pip install 'cairn[langchain]'``) only when a LangChain tool is
wrapped; importing this module does not.
"""

from __future__ import annotations

import importlib
from typing import Any, Self

from google.genai import types
from pydantic import ValidationError

from cairn.tools.code_references import resolve_fully_qualified_name
from cairn.tools.function_tool import FunctionTool, invalid_arguments_result
from cairn.tools.tool_configs import BaseToolConfig, ToolArgsConfig

_INSTALL_HINT = "pip install 'cairn[langchain]'"


def _langchain_base_tool() -> type[Any] | None:
    """LangChain's ``BaseTool`` class, or None when langchain-core is not installed."""
    try:
        module = importlib.import_module("langchain_core.tools")
    except ImportError:
        return None
    base: type[Any] = module.BaseTool
    return base


class LangchainTool(FunctionTool):
    """A LangChain tool the model can call, declared with the tool's own argument schema.

    ``tool`` is a ``langchain_core.tools.BaseTool`` (``@tool`` functions, ``StructuredTool``,
    ``Tool``, your subclasses), or any object with a ``run`` or ``_run`` method (then
    declared from that method's signature). ``name`` and ``description`` override the
    tool's. A call goes through the tool's ``ainvoke``, so LangChain validates the
    arguments (a mismatch comes back to the model as an error to fix), runs a sync tool
    off the event loop and applies its own error handling. A tool with
    ``return_direct=True`` ends the agent's turn with its result, as in ADK.
    """

    @classmethod
    def from_config(cls, config: ToolArgsConfig, config_abs_path: str) -> Self:
        """Built from ``args: {tool: my_agent.tools.wiki, name: ..., description: ...}``."""
        parsed = LangchainToolConfig.model_validate(config.model_dump())
        tool = resolve_fully_qualified_name(parsed.tool)
        return cls(tool, name=parsed.name or None, description=parsed.description or None)

    def __init__(self, tool: Any, name: str | None = None, description: str | None = None) -> None:
        base = _langchain_base_tool()
        self._langchain_tool = tool
        self._is_langchain = base is not None and isinstance(tool, base)
        if self._is_langchain:
            func = getattr(tool, "func", None) or getattr(tool, "coroutine", None) or tool._run
            super().__init__(_declared_elsewhere, name=name or tool.name)
            self.func = func
            self.description = description if description is not None else tool.description
        else:
            method = getattr(tool, "_run", None) or getattr(tool, "run", None)
            if not callable(method):
                hint = "" if base is not None else f" (to wrap LangChain tools: {_INSTALL_HINT})"
                raise TypeError(
                    "LangchainTool needs a LangChain tool (langchain_core.tools.BaseTool) or an "
                    f"object with a run or _run method, not {type(tool).__name__}{hint}"
                )
            super().__init__(method, name=name or getattr(tool, "name", None) or None)
            if description is not None:
                self.description = description
            elif getattr(tool, "description", None):
                self.description = str(tool.description)
        self._return_direct = bool(getattr(tool, "return_direct", False))

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        if not self._is_langchain:
            return super()._get_declaration()
        function_calling = importlib.import_module("langchain_core.utils.function_calling")
        declared = function_calling.convert_to_openai_function(self._langchain_tool)
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema=declared.get("parameters") or {"type": "object"},
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        if self._is_langchain:
            try:
                result = await self._langchain_tool.ainvoke(dict(args or {}))
            except ValidationError as error:
                result = invalid_arguments_result(self.name, error)
        else:
            result = await super().run_async(args=args, tool_context=tool_context)
        failed = isinstance(result, dict) and "error" in result
        if self._return_direct and not failed and tool_context is not None:
            tool_context.actions.skip_summarization = True
        return result


def _declared_elsewhere() -> None:
    """Stands in for a LangChain tool's function: its schema is the tool's own."""


__all__ = ["LangchainTool"]


class LangchainToolConfig(BaseToolConfig):
    """The ``args`` of ``- name: cairn.tools.langchain_tool.LangchainTool`` in an agent config."""

    tool: str
    """The fully qualified name of the LangChain tool object."""
    name: str = ""
    """The tool's name for the model (empty: the LangChain tool's own)."""
    description: str = ""
    """The tool's description (empty: the LangChain tool's own)."""
