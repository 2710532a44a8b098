"""ADK's path for `McpTool` (alias `MCPTool`): one tool of an MCP server, and its progress
callbacks."""

from cairn.tools.mcp_toolset import McpTool, ProgressCallbackFactory, ProgressFnT
from cairn.tools.mcp_toolset import McpTool as MCPTool

__all__ = ["MCPTool", "McpTool", "ProgressCallbackFactory", "ProgressFnT"]
