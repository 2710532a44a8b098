"""Objects an agent's ``tools`` may hold that make their own tool (a workflow node)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from cairn.tools.base_tool import BaseTool


@runtime_checkable
class ToolProvider(Protocol):
    """Something that is not a tool but becomes one: ``as_tool()`` gives it (a workflow or a
    workflow node becomes a ``NodeTool``, ADK's node-as-tool)."""

    def as_tool(self) -> BaseTool: ...
