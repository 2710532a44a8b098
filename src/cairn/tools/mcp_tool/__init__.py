"""ADK's path for the MCP tools: `McpToolset` (`MCPToolset`), `McpTool` and connections."""

from cairn.tools.mcp_toolset import (
    McpTool,
    McpToolset,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from cairn.tools.mcp_toolset import (
    McpTool as MCPTool,
)
from cairn.tools.mcp_toolset import (
    McpToolset as MCPToolset,
)

__all__ = [
    "MCPTool",
    "MCPToolset",
    "McpTool",
    "McpToolset",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
]
