"""ADK's path for the MCP connection parameters."""

from cairn.tools.mcp_toolset import StdioConnectionParams, StreamableHTTPConnectionParams

__all__ = ["StdioConnectionParams", "StreamableHTTPConnectionParams"]
