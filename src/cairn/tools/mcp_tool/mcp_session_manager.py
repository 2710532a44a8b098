"""ADK's path for the MCP connection parameters and `MCPSessionManager`."""

from cairn.tools.mcp_sessions import (
    CheckableMcpHttpClientFactory,
    MCPSessionManager,
    SseConnectionParams,
    SseServerParams,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
    StreamableHTTPServerParams,
    create_mcp_http_client,
    retry_on_errors,
)

__all__ = [
    "CheckableMcpHttpClientFactory",
    "MCPSessionManager",
    "SseConnectionParams",
    "SseServerParams",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
    "StreamableHTTPServerParams",
    "create_mcp_http_client",
    "retry_on_errors",
]
