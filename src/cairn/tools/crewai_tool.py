"""``CrewaiTool``: a CrewAI tool (``crewai.tools.BaseTool``) as a cairn tool.

It reads only what every CrewAI tool has (``name``, ``description``, ``args_schema``, a
pydantic model of its arguments, and ``run(**arguments)``), so cairn needs nothing of
CrewAI itself: ``import cairn`` never imports it, and no cairn extra installs it (crewai
pins versions of mcp, openai and pydantic older than cairn's other extras need; install
it beside cairn in the app's own environment).
"""

from __future__ import annotations

from typing import Any, Self

from google.genai import types
from pydantic import BaseModel, ValidationError

from cairn.tools.code_references import resolve_fully_qualified_name
from cairn.tools.function_tool import FunctionTool, invalid_arguments_result
from cairn.tools.tool_configs import BaseToolConfig, ToolArgsConfig
from cairn.user_code import call_user_code


class CrewaiTool(FunctionTool):
    """A CrewAI tool the model can call, declared with the tool's ``args_schema``.

    ``name`` overrides the tool's (``""`` keeps it, spaces turned into ``_`` and lower
    case, as ADK names it: CrewAI's names may hold spaces, function names may not);
    ``description`` likewise. Arguments that do not match ``args_schema`` come back to
    the model as an error to fix; the tool's ``run`` is called on a thread, off the
    event loop.
    """

    @classmethod
    def from_config(cls, config: ToolArgsConfig, config_abs_path: str) -> Self:
        """Built from ``args: {tool: my_agent.tools.crew_search, name: ..., description: ...}``."""
        made = _crewai_from_config(cls, config)
        assert isinstance(made, cls)
        return made

    def __init__(self, tool: Any, *, name: str, description: str = "") -> None:
        schema = getattr(tool, "args_schema", None)
        run = getattr(tool, "run", None)
        if not callable(run) or not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise TypeError(
                "CrewaiTool needs a CrewAI tool (crewai.tools.BaseTool): an object with a run "
                f"method and an args_schema pydantic model; {type(tool).__name__} has "
                f"{'no run method' if not callable(run) else 'no args_schema model'}"
            )
        own_name = str(getattr(tool, "name", "") or "").replace(" ", "_").lower()
        super().__init__(run, name=name or own_name or None)
        self.tool = tool
        self._schema: type[BaseModel] = schema
        if description:
            self.description = description
        elif getattr(tool, "description", None):
            self.description = str(tool.description)

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        parameters = self._schema.model_json_schema()
        parameters.pop("title", None)
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=parameters
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        arguments = {k: v for k, v in (args or {}).items() if k not in ("self", "tool_context")}
        try:
            self._schema.model_validate(arguments)
        except ValidationError as error:
            return invalid_arguments_result(self.name, error)
        return await call_user_code(self.tool.run, **arguments)


__all__ = ["CrewaiTool"]


class CrewaiToolConfig(BaseToolConfig):
    """The ``args`` of ``- name: cairn.tools.crewai_tool.CrewaiTool`` in an agent config."""

    tool: str
    """The fully qualified name of the CrewAI tool object."""
    name: str = ""
    """The tool's name for the model (empty: the CrewAI tool's own)."""
    description: str = ""
    """The tool's description (empty: the CrewAI tool's own)."""


def _crewai_from_config(cls: type[CrewaiTool], config: ToolArgsConfig) -> CrewaiTool:
    parsed = CrewaiToolConfig.model_validate(config.model_dump())
    tool = resolve_fully_qualified_name(parsed.tool)
    return cls(tool, name=parsed.name, description=parsed.description)
