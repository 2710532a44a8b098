"""A tiny MCP server for the McpToolset tests: ``python calculator.py [stdio | http PORT |
sse PORT]``. Besides its tools it has two resources (a text, an image) and a prompt.

Works with mcp 2.x (``MCPServer``) and 1.x (``FastMCP``).
"""

from __future__ import annotations

import asyncio
import os
import sys

try:
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as Server
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context  # type: ignore[no-redef]
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]

PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360f8cfc0f01f0005000201a5f6d2a60000000049454e44ae426082"
)
"""A 1x1 PNG image."""

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
async def count(to: int, ctx: Context) -> int:  # type: ignore[type-arg]
    """Count to a number, reporting progress at each step."""
    for step in range(1, to + 1):
        await ctx.report_progress(progress=step, total=to, message=f"at {step}")
    return to


@server.resource("notes://tides", name="tides", description="Tide times.", mime_type="text/plain")
def tides() -> str:
    return "High tide at 06:12, low tide at 12:30."


@server.resource("images://pixel", name="pixel", mime_type="image/png")
def pixel() -> bytes:
    return PIXEL


@server.prompt(name="persona", description="Who the agent is.")
def persona(topic: str, tone: str = "plain") -> str:
    return f"You are a guide to {topic}. Answer in a {tone} tone."


@server.tool()
def crash() -> str:
    """Stop the server process at once."""
    os._exit(3)


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "stdio":
        server.run()
    else:
        name = {"http": "streamable-http", "sse": "sse"}[transport]
        port = int(sys.argv[2])
        if Server.__name__ == "MCPServer":
            server.run(name, host="127.0.0.1", port=port)  # type: ignore[call-overload]
        else:
            server.settings.host = "127.0.0.1"
            server.settings.port = port
            server.run(name)  # type: ignore[arg-type]
