"""ADK's path for `McpTool` (alias `MCPTool`): one tool of an MCP server."""

from cairn.tools.mcp_toolset import McpTool
from cairn.tools.mcp_toolset import McpTool as MCPTool

__all__ = ["MCPTool", "McpTool"]
