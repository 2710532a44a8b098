"""A tiny MCP server for the McpToolset tests: ``python calculator.py [stdio | http PORT]``.

Works with mcp 2.x (``MCPServer``) and 1.x (``FastMCP``).
"""

from __future__ import annotations

import asyncio
import os
import sys

try:
    from mcp.server.mcpserver import MCPServer as Server
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]

server = Server("cairn-test-calculator")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Say a text loudly."""
    if not text:
        raise ToolError("there is nothing to shout")
    return text.upper() + "!"


@server.tool()
async def nap(seconds: float) -> str:
    """Sleep, then say so."""
    await asyncio.sleep(seconds)
    return "rested"


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool()
def crash() -> str:
    """Stop the server process at once."""
    os._exit(3)


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "stdio":
        server.run()
    else:
        port = int(sys.argv[2])
        if Server.__name__ == "MCPServer":
            server.run("streamable-http", host="127.0.0.1", port=port)
        else:
            server.settings.host = "127.0.0.1"
            server.settings.port = port
            server.run("streamable-http")
