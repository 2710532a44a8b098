"""ADK's path for `McpToolset` (alias `MCPToolset`)."""

from cairn.tools.mcp_toolset import McpToolset, McpToolsetConfig
from cairn.tools.mcp_toolset import McpToolset as MCPToolset

__all__ = ["MCPToolset", "McpToolset", "McpToolsetConfig"]
