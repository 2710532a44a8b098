"""ADK's path for the MCP tools: `McpToolset` (`MCPToolset`), `McpTool`, connections,
conversion to MCP tool types, and `to_mcp_server`."""

from cairn.runners.mcp_server import to_mcp_server
from cairn.tools.mcp_conversion import adk_to_mcp_tool_type, gemini_to_json_schema
from cairn.tools.mcp_sessions import (
    SseConnectionParams,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from cairn.tools.mcp_toolset import (
    McpTool,
    McpToolset,
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
    "SseConnectionParams",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
    "adk_to_mcp_tool_type",
    "gemini_to_json_schema",
    "to_mcp_server",
]
