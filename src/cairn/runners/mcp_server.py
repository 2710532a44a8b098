"""An agent served as an MCP server (ADK's ``to_mcp_server``): one tool that runs it.

Needs the ``mcp`` package (``pip install 'cairn[mcp]'``).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import weakref
from collections.abc import MutableMapping
from typing import Any

from google.genai import types

from cairn.agents.base_agent import BaseAgent
from cairn.runners.runner import InMemoryRunner, Runner
from cairn.tools.mcp_sessions import mcp_module

logger = logging.getLogger(__name__)

MCP_USER_ID = "mcp_user"
"""The user whose sessions hold the MCP clients' conversations (as in ADK)."""
_INLINE_DATA_URI = "resource://adk-agent/inline-data"
_DELETE_TIMEOUT = 10.0


def _server_class() -> Any:
    """The installed mcp's high-level server: ``MCPServer`` (2.x) or ``FastMCP`` (1.x)."""
    try:
        return mcp_module("mcp.server.mcpserver").MCPServer
    except ImportError:
        return mcp_module("mcp.server.fastmcp").FastMCP


def _context_class() -> Any:
    try:
        return mcp_module("mcp.server.mcpserver").Context
    except ImportError:
        return mcp_module("mcp.server.fastmcp").Context


def _block(part: types.Part) -> Any:
    """One part of the agent's answer as an MCP content block (None: nothing to show)."""
    mcp_types = mcp_module("mcp.types")
    if part.thought:
        return None  # the model's reasoning is not its answer
    if part.text:
        return mcp_types.TextContent(type="text", text=part.text)
    blob = part.inline_data
    if blob is None or blob.data is None:
        return None  # a function call, a thought signature: not for the client
    data = base64.b64encode(blob.data).decode("ascii")
    mime_type = blob.mime_type or "application/octet-stream"
    if mime_type.startswith("image/"):
        return mcp_types.ImageContent.model_validate(
            {"type": "image", "data": data, "mimeType": mime_type}
        )
    if mime_type.startswith("audio/"):
        return mcp_types.AudioContent.model_validate(
            {"type": "audio", "data": data, "mimeType": mime_type}
        )
    resource = mcp_types.BlobResourceContents.model_validate(
        {"uri": _INLINE_DATA_URI, "blob": data, "mimeType": mime_type}
    )
    return mcp_types.EmbeddedResource(type="resource", resource=resource)


def _connection_of(ctx: Any) -> Any:
    """The object standing for the MCP connection of a tool call.

    mcp 1.x gives one ``session`` per connection; 2.x makes a session per message and
    keeps the connection on it, so that is used when it is there.
    """
    session = ctx.session
    return getattr(session, "_connection", session)


class _Conversations:
    """One cairn session per MCP connection; the sessions of closed connections deleted."""

    def __init__(self, runner: Runner, *, delete_orphaned: bool) -> None:
        self.runner = runner
        self.delete_orphaned = delete_orphaned
        self._by_connection: MutableMapping[Any, str] = weakref.WeakKeyDictionary()
        self._created: set[str] = set()

    async def session_for(self, connection: Any) -> str:
        session_id = self._by_connection.get(connection)
        if session_id is None:
            session = await self.runner.session_service.create_session(
                app_name=self.runner.app_name, user_id=MCP_USER_ID
            )
            session_id = session.id
            self._by_connection[connection] = session_id
            self._created.add(session_id)
        return session_id

    async def delete_orphans(self) -> None:
        """Delete the sessions whose connection is gone; one that fails is tried next time."""
        if not self.delete_orphaned:
            return
        orphans = self._created - set(self._by_connection.values())
        for session_id in orphans:
            self._created.discard(session_id)
            try:
                async with asyncio.timeout(_DELETE_TIMEOUT):
                    await self.runner.session_service.delete_session(
                        app_name=self.runner.app_name, user_id=MCP_USER_ID, session_id=session_id
                    )
            except Exception as error:  # housekeeping: never fails the call that started it
                self._created.add(session_id)
                logger.warning("deleting MCP conversation %s failed: %r", session_id, error)


def to_mcp_server(
    agent: BaseAgent,
    *,
    name: str | None = None,
    instructions: str | None = None,
    runner: Runner | None = None,
    delete_orphaned_sessions: bool = True,
) -> Any:
    """An MCP server with one tool, named after the agent, that runs the agent (ADK's function).

    An MCP client (an IDE, a coding assistant, cairn's own ``McpToolset``) calls the
    tool with ``request`` (a string) and gets the agent's final answer as MCP content
    (text, images, audio, other data as an embedded resource); the agent's
    intermediate texts are sent as progress notifications. Each MCP connection is one
    conversation: a session of user ``mcp_user``, kept while the connection lasts and
    (``delete_orphaned_sessions``) deleted once it is gone. ``runner`` defaults to an
    ``InMemoryRunner``; pass one with a persistent session service to keep the
    conversations. Returns the installed mcp's server (``MCPServer`` in mcp 2.x,
    ``FastMCP`` in 1.x): ``server.run("stdio")``, ``server.run("streamable-http")``...
    """
    if not isinstance(agent, BaseAgent):
        raise TypeError(
            f"to_mcp_server serves an agent (a cairn BaseAgent), got a {type(agent).__name__}"
        )
    tool_name = name or agent.name
    server = _server_class()(name=tool_name, instructions=instructions)
    conversations = _Conversations(
        runner if runner is not None else InMemoryRunner(agent=agent, app_name=agent.name),
        delete_orphaned=delete_orphaned_sessions,
    )

    async def run_agent(request: str, ctx: Any) -> list[Any]:
        await conversations.delete_orphans()
        session_id = await conversations.session_for(_connection_of(ctx))
        message = types.Content(role="user", parts=[types.Part(text=request)])
        answer: list[Any] = []
        async for event in conversations.runner.run_async(
            user_id=MCP_USER_ID, session_id=session_id, new_message=message
        ):
            parts = event.content.parts if event.content is not None else None
            if not parts or event.partial:
                continue
            if event.is_final_response():
                answer.extend(block for block in map(_block, parts) if block is not None)
            else:
                text = "".join(part.text or "" for part in parts if not part.thought)
                if text:
                    await ctx.report_progress(progress=0.0, message=text)
        return answer

    run_agent.__annotations__ = {"request": str, "ctx": _context_class(), "return": list[Any]}
    server.add_tool(
        run_agent,
        name=tool_name,
        description=agent.description or f"Run the {tool_name} agent.",
        structured_output=False,
    )
    return server


__all__ = ["MCP_USER_ID", "to_mcp_server"]
