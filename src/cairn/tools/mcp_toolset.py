"""The tools of an MCP (Model Context Protocol) server, over stdio or streamable HTTP.

Needs the ``mcp`` package (``pip install 'cairn[mcp]'``); importing this module
does not, so ``cairn.tools`` works without it. Works with ``mcp`` 1.x and 2.x.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import importlib
import inspect
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TextIO

from google.genai import types

from cairn.tools.base_tool import BaseTool, BaseToolset, ToolPredicate

logger = logging.getLogger(__name__)

_INSTALL_HINT = "pip install 'cairn[mcp]'"
_MIN_STARTUP_TIMEOUT = 30.0
"""Starting a server (spawning it, the MCP handshake) may take this long, whatever the
per-request timeout: a cold interpreter importing its dependencies is slow."""
_CLOSE_TIMEOUT = 10.0
_CONNECTION_CLOSED = -32000
"""The JSON-RPC error code mcp gives requests whose connection closed."""


def _mcp_module(name: str = "mcp") -> Any:
    """Import ``name`` from the ``mcp`` package, or fail saying how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise ImportError(
            f"MCP tools need the 'mcp' package, which is not installed ({error}). "
            f"Install it with: {_INSTALL_HINT}"
        ) from error


@dataclasses.dataclass
class StreamableHTTPConnectionParams:
    """Where an MCP server listens for streamable HTTP (ADK's class of the same name).

    ``timeout`` bounds connecting and sending (seconds); ``sse_read_timeout``
    bounds waiting for each answer (a tool call included).
    """

    url: str
    headers: dict[str, str] | None = None
    timeout: float = 5.0
    sse_read_timeout: float = 300.0
    terminate_on_close: bool = True


@dataclasses.dataclass
class StdioConnectionParams:
    """An MCP server started as a subprocess, spoken to over stdin/stdout (as in ADK).

    ``server_params`` is an ``mcp.StdioServerParameters``; ``timeout`` bounds
    each request (listing tools, a tool call), in seconds. Passing a bare
    ``StdioServerParameters`` to ``McpToolset`` means a 5 s timeout, as in ADK.
    """

    server_params: Any
    timeout: float = 5.0


ConnectionParams = StdioConnectionParams | StreamableHTTPConnectionParams | Any
"""``StdioServerParameters`` (from ``mcp``), ``StdioConnectionParams`` or
``StreamableHTTPConnectionParams``."""


def _field(obj: Any, snake: str, camel: str) -> Any:
    """An attribute of an mcp model: snake_case in mcp 2.x, camelCase in 1.x."""
    if hasattr(obj, snake):
        return getattr(obj, snake)
    return getattr(obj, camel, None)


def _httpx_module() -> Any:
    """The HTTP library the installed mcp builds its clients with (httpx2 in 2.x, httpx in 1.x)."""
    utils = _mcp_module("mcp.shared._httpx_utils")
    return getattr(utils, "httpx2", None) or utils.httpx


async def _enter_http(
    stack: contextlib.AsyncExitStack, params: StreamableHTTPConnectionParams
) -> tuple[Any, Any]:
    module = _mcp_module("mcp.client.streamable_http")
    if hasattr(module, "streamable_http_client"):  # mcp >= 1.24 and 2.x
        httpx = _httpx_module()
        utils = _mcp_module("mcp.shared._httpx_utils")
        client = await stack.enter_async_context(
            utils.create_mcp_http_client(
                headers=params.headers,
                timeout=httpx.Timeout(params.timeout, read=params.sse_read_timeout),
            )
        )
        streams = await stack.enter_async_context(
            module.streamable_http_client(
                params.url, http_client=client, terminate_on_close=params.terminate_on_close
            )
        )
    elif hasattr(module, "streamablehttp_client"):  # mcp 1.8 - 1.23
        streams = await stack.enter_async_context(
            module.streamablehttp_client(
                params.url,
                headers=params.headers,
                timeout=datetime.timedelta(seconds=params.timeout),
                sse_read_timeout=datetime.timedelta(seconds=params.sse_read_timeout),
                terminate_on_close=params.terminate_on_close,
            )
        )
    else:
        raise ImportError(
            "the installed 'mcp' package has no streamable HTTP client (it needs mcp>=1.8); "
            f"upgrade it: {_INSTALL_HINT} --upgrade"
        )
    return streams[0], streams[1]


class _Connection:
    """One MCP client session, owned by a background task of the loop that opened it.

    The transport and the session are async context managers bound to the task
    that entered them (anyio cancel scopes). A dedicated owner task enters them
    (in an ``AsyncExitStack``) and, told to stop, leaves them; so the session
    can be used and closed from any task of that loop. A session that lost its
    server, or belongs to an event loop other than the running one, is replaced
    by a new one on the next request.
    """

    def __init__(
        self,
        opener: Callable[[contextlib.AsyncExitStack], Awaitable[Any]],
        *,
        request_timeout: float | None,
        description: str,
    ) -> None:
        self._opener = opener
        self.request_timeout = request_timeout
        self.description = description
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._session: Any = None
        self._broken = False
        self.generation = 0
        """Increases with every new session (tools listed earlier are listed again)."""

    @property
    def is_open(self) -> bool:
        return (
            self._session is not None
            and not self._broken
            and self._task is not None
            and not self._task.done()
            and self._loop is _running_loop()
        )

    async def session(self) -> Any:
        """The open session, opening one first if needed."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._abandon()  # a session of another loop cannot be used from this one
            self._loop, self._lock = loop, asyncio.Lock()
        assert self._lock is not None
        async with self._lock:
            if self.is_open:
                return self._session
            if self._task is not None:  # lost its server, or failed to start
                await self._shut(self._task, self._stop)
            ready: asyncio.Future[Any] = loop.create_future()
            self._stop, self._session, self._broken = asyncio.Event(), None, False
            self._task = loop.create_task(
                self._own(ready, self._stop), name=f"cairn-mcp {self.description}"
            )
            try:
                self._session = await asyncio.shield(ready)
            except asyncio.CancelledError:
                ready.cancel()  # the owner task sees it and winds down
                raise
            self.generation += 1
            return self._session

    async def _own(self, ready: asyncio.Future[Any], stop: asyncio.Event) -> None:
        """The owner task: open the session, hand it over, keep it until told to stop."""
        stack = contextlib.AsyncExitStack()
        try:
            session = await self._start(stack)
            if not ready.done():  # else the caller gave up waiting
                ready.set_result(session)
                await stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except Exception as error:
            if not ready.done():
                ready.set_exception(error)
            else:
                logger.warning("the connection to MCP server %s ended: %r", self.description, error)
        finally:
            # Left without an error in flight: anyio task groups would wrap it in a group.
            try:
                await stack.aclose()
            except Exception as error:
                logger.warning("closing MCP server %s failed: %r", self.description, error)

    async def _start(self, stack: contextlib.AsyncExitStack) -> Any:
        startup = max(self.request_timeout or 0.0, _MIN_STARTUP_TIMEOUT)
        try:
            async with asyncio.timeout(startup):
                return await self._opener(stack)
        except TimeoutError:
            raise TimeoutError(
                f"the MCP server {self.description} did not start and answer the MCP "
                f"handshake within {startup:g} s"
            ) from None
        except ImportError:
            raise
        except Exception as error:
            raise ConnectionError(
                f"could not connect to the MCP server {self.description}: "
                f"{type(error).__name__}: {error}"
            ) from error

    async def request(
        self, what: str, call: Callable[[Any], Awaitable[Any]], *, retry: bool = False
    ) -> Any:
        """Run ``call(session)`` within the request timeout.

        ``retry``: if the connection turns out to be gone (the server died since
        the last request), reconnect and run it once more. Only for requests
        that are safe to repeat: a tool call is not retried, since the server
        may have run it.
        """
        try:
            return await self._request_once(what, call)
        except Exception:
            if not (retry and self._broken):
                raise
        return await self._request_once(what, call)

    async def _request_once(self, what: str, call: Callable[[Any], Awaitable[Any]]) -> Any:
        session = await self.session()
        try:
            async with asyncio.timeout(self.request_timeout):
                return await call(session)
        except TimeoutError:
            raise TimeoutError(
                f"the MCP server {self.description} did not answer {what} within "
                f"{self.request_timeout:g} s"
            ) from None
        except Exception as error:
            if _is_disconnection(error) or (self._task is not None and self._task.done()):
                self._broken = True  # the next request reconnects
            raise

    async def close(self) -> None:
        if self._loop is not _running_loop():
            self._abandon()
            return
        task, stop = self._task, self._stop
        self._task = self._stop = self._session = None
        if task is not None:
            await self._shut(task, stop)

    async def _shut(self, task: asyncio.Task[None], stop: asyncio.Event | None) -> None:
        if task.done():
            return
        if stop is not None:
            stop.set()
        try:
            async with asyncio.timeout(_CLOSE_TIMEOUT):
                await asyncio.shield(task)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise  # our caller is cancelled; the owner task winds down on its own
        except Exception as error:
            logger.warning("closing MCP server %s failed: %r", self.description, error)

    def _abandon(self) -> None:
        """Drop the session of another event loop, asking that loop to wind it down."""
        loop, stop, task = self._loop, self._stop, self._task
        if loop is not None and stop is not None and task is not None and not task.done():
            with contextlib.suppress(RuntimeError):  # that loop is closed: nothing to stop
                loop.call_soon_threadsafe(stop.set)
        self._loop = self._lock = self._task = self._stop = self._session = None


def _is_disconnection(error: BaseException) -> bool:
    """Whether ``error`` says the connection to the server is gone (not a tool failure)."""
    if type(error).__name__ in {"ClosedResourceError", "BrokenResourceError", "EndOfStream"}:
        return True
    if isinstance(error, ConnectionError):
        return True
    code = getattr(error, "code", None)
    if code is None:
        code = getattr(getattr(error, "error", None), "code", None)
    return code == _CONNECTION_CLOSED or "connection closed" in str(error).lower()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class McpTool(BaseTool):
    """One tool of an MCP server: declared with the server's input (and output) schema, run by
    ``tools/call``.

    The result the model gets is the server's ``CallToolResult`` as ADK hands it over:
    ``content`` (a list of typed parts: ``{"type": "text", "text": ...}``, images, ...),
    ``structuredContent`` when the server sends it, and ``isError`` (a tool error is a
    result with ``isError: true``, its text in ``content``).
    """

    def __init__(self, *, mcp_tool: Any, connection: _Connection) -> None:
        super().__init__(name=str(mcp_tool.name), description=str(mcp_tool.description or ""))
        self.mcp_tool = mcp_tool
        self._connection = connection

    @property
    def input_schema(self) -> dict[str, Any]:
        schema = _field(self.mcp_tool, "input_schema", "inputSchema")
        return dict(schema) if schema else {"type": "object", "properties": {}}

    def declaration(self) -> types.FunctionDeclaration:
        output = _field(self.mcp_tool, "output_schema", "outputSchema")
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema=self.input_schema,
            response_json_schema=dict(output) if output else None,
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        result = await self._connection.request(
            f"the call of tool {self.name!r}",
            lambda session: session.call_tool(self.name, dict(args or {})),
        )
        return _tool_result(result)


def _tool_result(result: Any) -> dict[str, Any]:
    """A ``CallToolResult`` as JSON, with the MCP wire's key names (``isError``,
    ``structuredContent``, ``mimeType``; ``meta`` for the protocol's ``_meta``)."""
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    dumped.pop("resultType", None)  # mcp 2.x's own bookkeeping, not the tool's answer
    return _meta_renamed(dumped)


def _meta_renamed(value: dict[str, Any]) -> dict[str, Any]:
    """``_meta`` keys (of the result and its content parts) named ``meta``, as ADK names them;
    ``structuredContent`` is the server's own data and stays as it is."""
    renamed: dict[str, Any] = {}
    for key, item in value.items():
        if key == "structuredContent":
            renamed[key] = item
        elif key == "content" and isinstance(item, list):
            renamed[key] = [_meta_renamed(p) if isinstance(p, dict) else p for p in item]
        else:
            renamed["meta" if key == "_meta" else key] = item
    return renamed


class McpToolset(BaseToolset):
    """The tools of one MCP server (ADK's ``McpToolset``).

    ``connection_params`` is an ``mcp.StdioServerParameters`` (a server started
    as a subprocess), a ``StdioConnectionParams`` (the same, with a timeout) or a
    ``StreamableHTTPConnectionParams`` (a server at a URL). The server is
    started or connected to on the first ``get_tools()``; its tools are listed
    then and kept (a reconnection lists them again). ``tool_filter`` keeps the
    named tools, or those a predicate ``(tool, context) -> bool`` accepts.

    One session serves every agent and task of an event loop, and ``close()``
    may be called from any task of it; call it when done (it stops a stdio
    server). Used from another event loop (``Runner.run`` runs each call on a
    new one), the toolset opens a new session there.
    """

    def __init__(
        self,
        connection_params: ConnectionParams = None,
        tool_filter: ToolPredicate | Callable[[BaseTool, Any], bool] | list[str] | None = None,
        *,
        tool_name_prefix: str | None = None,
        errlog: TextIO = sys.stderr,
    ) -> None:
        if connection_params is None:
            raise TypeError(
                "McpToolset needs connection_params: StdioServerParameters(command=..., "
                "args=[...]), StdioConnectionParams(...) or StreamableHTTPConnectionParams(url=...)"
            )
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        mcp = _mcp_module()
        if isinstance(connection_params, mcp.StdioServerParameters):
            connection_params = StdioConnectionParams(server_params=connection_params)
        if isinstance(connection_params, StdioConnectionParams):
            server = connection_params.server_params
            description = " ".join([server.command, *server.args])
            timeout: float | None = connection_params.timeout
        elif isinstance(connection_params, StreamableHTTPConnectionParams):
            description = connection_params.url
            timeout = connection_params.sse_read_timeout
        else:
            raise TypeError(
                f"McpToolset cannot connect with a {type(connection_params).__name__}; pass "
                "StdioServerParameters, StdioConnectionParams or StreamableHTTPConnectionParams"
            )
        self.connection_params = connection_params
        self.errlog = errlog
        self._connection = _Connection(self._open, request_timeout=timeout, description=description)
        self._tools: list[McpTool] | None = None
        self._tools_generation = -1

    async def _open(self, stack: contextlib.AsyncExitStack) -> Any:
        mcp = _mcp_module()
        params = self.connection_params
        if isinstance(params, StreamableHTTPConnectionParams):
            read, write = await _enter_http(stack, params)
        else:
            stdio = _mcp_module("mcp.client.stdio")
            streams = await stack.enter_async_context(
                stdio.stdio_client(params.server_params, errlog=self.errlog)
            )
            read, write = streams[0], streams[1]
        session = await stack.enter_async_context(mcp.ClientSession(read, write))
        await session.initialize()
        return session

    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        connection = self._connection
        await connection.session()
        if self._tools is None or self._tools_generation != connection.generation:
            listed = await connection.request("the tools listing", _list_all_tools, retry=True)
            tools = [McpTool(mcp_tool=tool, connection=connection) for tool in listed]
            # By name, as ADK declares them: the server's order is not part of the protocol.
            self._tools = sorted(tools, key=lambda tool: tool.name)
            self._tools_generation = connection.generation
        return [tool for tool in self._tools if self._is_selected(tool, readonly_context)]

    async def close(self) -> None:
        """End the session (and stop a stdio server); a later ``get_tools()`` reconnects."""
        self._tools = None
        await self._connection.close()


async def _list_all_tools(session: Any) -> list[Any]:
    tools: list[Any] = []
    result = await session.list_tools()
    tools.extend(result.tools)
    cursor = _field(result, "next_cursor", "nextCursor")
    paged_by_params = "params" in inspect.signature(session.list_tools).parameters
    while cursor:
        if paged_by_params:
            params = _mcp_module("mcp.types").PaginatedRequestParams(cursor=cursor)
            result = await session.list_tools(params=params)
        else:
            result = await session.list_tools(cursor=cursor)
        tools.extend(result.tools)
        cursor = _field(result, "next_cursor", "nextCursor")
    return tools


__all__ = [
    "McpTool",
    "McpToolset",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
]
