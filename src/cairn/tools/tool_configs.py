"""How an agent config names a tool: ``ToolConfig`` (a name and optional ``args``), as ADK's."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class BaseToolConfig(BaseModel):
    """The base of a tool's own config schema (``AgentToolConfig``, ``McpToolsetConfig``...):
    its keys are checked (an unknown one is refused)."""

    model_config = ConfigDict(extra="forbid")


class ToolArgsConfig(BaseModel):
    """The ``args`` of a ``ToolConfig``: any keys; the tool's ``from_config`` reads them."""

    model_config = ConfigDict(extra="allow")


class ToolConfig(BaseModel):
    """One entry of an agent config's ``tools``.

    ``name`` is a built-in tool of ``cairn.tools`` (``google_search``, ``load_memory``,
    ``exit_loop``, ``AgentTool``...), or the fully qualified name of a tool instance, a tool
    class, a function that makes a tool (called with ``args``) or a plain function (a
    function tool). A tool class is built with ``Class.from_config(args, config_path)``.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="A built-in tool's name, or a fully qualified name.")
    args: ToolArgsConfig | None = Field(default=None, description="The tool's arguments.")
