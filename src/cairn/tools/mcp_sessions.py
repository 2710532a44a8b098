"""Connections to MCP (Model Context Protocol) servers: stdio, SSE and streamable HTTP.

``MCPSessionManager`` (ADK's name) opens one client session per set of HTTP headers
and keeps it, each owned by a background task so that any task of the event loop can
use and close it; every request it makes for cairn is bounded by a timeout.

Needs the ``mcp`` package (``pip install 'cairn[mcp]'``); importing this module
does not, so ``cairn.tools`` works without it. Works with ``mcp`` 1.x and 2.x.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import functools
import importlib
import inspect
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TextIO, TypeVar, runtime_checkable

logger = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'cairn[mcp]'"
_MIN_STARTUP_TIMEOUT = 30.0
"""Starting a server (spawning it, the MCP handshake) may take this long, whatever the
per-request timeout: a cold interpreter importing its dependencies is slow."""
_CLOSE_TIMEOUT = 10.0
_CONNECTION_CLOSED = -32000
"""The JSON-RPC error code mcp gives requests whose connection closed."""

T = TypeVar("T")


def mcp_module(name: str = "mcp") -> Any:
    """Import ``name`` from the ``mcp`` package, or fail saying how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise ImportError(
            f"MCP tools need the 'mcp' package, which is not installed ({error}). "
            f"Install it with: {INSTALL_HINT}"
        ) from error


def mcp_field(obj: Any, snake: str, camel: str) -> Any:
    """An attribute of an mcp model: snake_case in mcp 2.x, camelCase in 1.x."""
    if hasattr(obj, snake):
        return getattr(obj, snake)
    return getattr(obj, camel, None)


def _httpx_module() -> Any:
    """The HTTP library the installed mcp builds its clients with (httpx2 in 2.x, httpx in 1.x)."""
    utils = mcp_module("mcp.shared._httpx_utils")
    return getattr(utils, "httpx2", None) or utils.httpx


def create_mcp_http_client(
    headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None
) -> Any:
    """The HTTP client MCP's HTTP transports use by default (ADK's function of this name).

    An ``httpx.AsyncClient`` (``httpx2`` with mcp 2.x) with the given headers, timeout
    (an ``httpx.Timeout``) and auth, made as the installed ``mcp`` makes it (following
    redirects, MCP's default timeouts). Pass your own factory of this shape as
    ``httpx_client_factory`` to use another client (a proxy, custom TLS).
    """
    utils = mcp_module("mcp.shared._httpx_utils")
    return utils.create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)


@runtime_checkable
class CheckableMcpHttpClientFactory(Protocol):
    """What ``httpx_client_factory`` takes: ``(headers=, timeout=, auth=) -> AsyncClient``."""

    def __call__(
        self, headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None
    ) -> Any: ...


@dataclasses.dataclass
class StdioConnectionParams:
    """An MCP server started as a subprocess, spoken to over stdin/stdout (as in ADK).

    ``server_params`` is an ``mcp.StdioServerParameters``; ``timeout`` bounds
    each request (listing tools, a tool call), in seconds. Passing a bare
    ``StdioServerParameters`` means a 5 s timeout, as in ADK.
    """

    server_params: Any
    timeout: float = 5.0


@dataclasses.dataclass
class StreamableHTTPConnectionParams:
    """Where an MCP server listens for streamable HTTP (ADK's class of the same name).

    ``timeout`` bounds connecting and sending (seconds); ``sse_read_timeout``
    bounds waiting for each answer (a tool call included). ``httpx_client_factory``
    makes the HTTP client (by default ``create_mcp_http_client``).
    """

    url: str
    headers: dict[str, Any] | None = None
    timeout: float = 5.0
    sse_read_timeout: float = 300.0
    terminate_on_close: bool = True
    httpx_client_factory: CheckableMcpHttpClientFactory = create_mcp_http_client


@dataclasses.dataclass
class SseConnectionParams:
    """Where an MCP server listens with MCP's SSE transport (ADK's class of the same name).

    The client reads server-sent events from ``url`` (typically ``.../sse``) and posts
    its messages where the server's first event says. ``timeout`` bounds connecting
    and sending (seconds); ``sse_read_timeout`` bounds waiting for each answer (a
    tool call included). ``httpx_client_factory`` makes the HTTP client.
    """

    url: str
    headers: dict[str, Any] | None = None
    timeout: float = 5.0
    sse_read_timeout: float = 300.0
    httpx_client_factory: CheckableMcpHttpClientFactory = create_mcp_http_client


SseServerParams = SseConnectionParams
"""ADK's older name for ``SseConnectionParams``."""
StreamableHTTPServerParams = StreamableHTTPConnectionParams
"""ADK's older name for ``StreamableHTTPConnectionParams``."""

ConnectionParams = (
    StdioConnectionParams | SseConnectionParams | StreamableHTTPConnectionParams | Any
)
"""``StdioServerParameters`` (from ``mcp``), ``StdioConnectionParams``,
``SseConnectionParams`` or ``StreamableHTTPConnectionParams``."""

_KINDS = (
    "StdioServerParameters(command=..., args=[...]), StdioConnectionParams(...), "
    "SseConnectionParams(url=...) or StreamableHTTPConnectionParams(url=...)"
)


def normalized_connection_params(
    connection_params: ConnectionParams, owner: str
) -> StdioConnectionParams | SseConnectionParams | StreamableHTTPConnectionParams:
    """``connection_params`` as one of cairn's classes, or a ``TypeError`` naming ``owner``."""
    if connection_params is None:
        raise TypeError(f"{owner} needs connection_params: {_KINDS}")
    mcp = mcp_module()  # without it nothing can connect: say so now, not at the first call
    if isinstance(
        connection_params,
        StdioConnectionParams | SseConnectionParams | StreamableHTTPConnectionParams,
    ):
        return connection_params
    if isinstance(connection_params, mcp.StdioServerParameters):
        return StdioConnectionParams(server_params=connection_params)
    raise TypeError(
        f"{owner} cannot connect with a {type(connection_params).__name__}; pass {_KINDS}"
    )


def _supports(function: Callable[..., Any], keyword: str) -> bool:
    try:
        return keyword in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


async def _enter_streamable_http(
    stack: contextlib.AsyncExitStack,
    params: StreamableHTTPConnectionParams,
    headers: dict[str, str] | None,
) -> tuple[Any, Any]:
    module = mcp_module("mcp.client.streamable_http")
    if hasattr(module, "streamable_http_client"):  # mcp >= 1.24 and 2.x
        httpx = _httpx_module()
        client = await stack.enter_async_context(
            params.httpx_client_factory(
                headers=headers,
                timeout=httpx.Timeout(params.timeout, read=params.sse_read_timeout),
            )
        )
        streams = await stack.enter_async_context(
            module.streamable_http_client(
                params.url, http_client=client, terminate_on_close=params.terminate_on_close
            )
        )
    elif hasattr(module, "streamablehttp_client"):  # mcp 1.8 - 1.23
        extra: dict[str, Any] = {}
        if _supports(module.streamablehttp_client, "httpx_client_factory"):
            extra["httpx_client_factory"] = params.httpx_client_factory
        streams = await stack.enter_async_context(
            module.streamablehttp_client(
                params.url,
                headers=headers,
                timeout=datetime.timedelta(seconds=params.timeout),
                sse_read_timeout=datetime.timedelta(seconds=params.sse_read_timeout),
                terminate_on_close=params.terminate_on_close,
                **extra,
            )
        )
    else:
        raise ImportError(
            "the installed 'mcp' package has no streamable HTTP client (it needs mcp>=1.8); "
            f"upgrade it: {INSTALL_HINT} --upgrade"
        )
    return streams[0], streams[1]


async def _enter_sse(
    stack: contextlib.AsyncExitStack, params: SseConnectionParams, headers: dict[str, str] | None
) -> tuple[Any, Any]:
    module = mcp_module("mcp.client.sse")
    extra: dict[str, Any] = {}
    if _supports(module.sse_client, "httpx_client_factory"):
        extra["httpx_client_factory"] = params.httpx_client_factory
    streams = await stack.enter_async_context(
        module.sse_client(
            params.url,
            headers=headers,
            timeout=params.timeout,
            sse_read_timeout=params.sse_read_timeout,
            **extra,
        )
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

    @property
    def broken(self) -> bool:
        return self._broken

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
        self, what: str, call: Callable[[Any], Awaitable[T]], *, retry: bool = False
    ) -> T:
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

    async def _request_once(self, what: str, call: Callable[[Any], Awaitable[T]]) -> T:
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


class MCPSessionManager:
    """Opens, keeps and closes the client sessions to one MCP server (ADK's class).

    ``create_session(headers)`` returns an initialized ``mcp.ClientSession``: one per
    set of headers (merged over the connection's own; a stdio server has one), kept
    open and reused, and replaced when its server went away or it belongs to another
    event loop. ``request`` runs one call on a session within the connection's
    timeout (stdio: ``timeout``; HTTP and SSE: ``sse_read_timeout``), as every
    call cairn makes does; bound your own calls on a session from
    ``create_session`` likewise. ``close()`` ends every session (and stops a
    stdio server).
    """

    def __init__(
        self,
        connection_params: ConnectionParams,
        errlog: TextIO = sys.stderr,
        *,
        sampling_callback: Any = None,
        sampling_capabilities: Any = None,
    ) -> None:
        params = normalized_connection_params(connection_params, "MCPSessionManager")
        self.connection_params = params
        self.errlog = errlog
        self.sampling_callback = sampling_callback
        self.sampling_capabilities = sampling_capabilities
        if isinstance(params, StdioConnectionParams):
            server = params.server_params
            self.description = " ".join([server.command, *server.args])
            self.request_timeout: float | None = params.timeout
        else:
            self.description = params.url
            self.request_timeout = params.sse_read_timeout
        self._connections: dict[str, _Connection] = {}

    def _merged_headers(self, headers: dict[str, str] | None) -> dict[str, str] | None:
        params = self.connection_params
        if isinstance(params, StdioConnectionParams):
            return None  # a subprocess has no headers
        merged = {**(params.headers or {}), **(headers or {})}
        return merged or None

    def _connection(self, headers: dict[str, str] | None) -> _Connection:
        merged = self._merged_headers(headers)
        key = json.dumps(merged or {}, sort_keys=True, default=str)
        connection = self._connections.get(key)
        if connection is None:
            connection = _Connection(
                functools.partial(self._open, headers=merged),
                request_timeout=self.request_timeout,
                description=self.description,
            )
            self._connections[key] = connection
        return connection

    async def _open(
        self, stack: contextlib.AsyncExitStack, *, headers: dict[str, str] | None
    ) -> Any:
        mcp = mcp_module()
        params = self.connection_params
        if isinstance(params, StreamableHTTPConnectionParams):
            read, write = await _enter_streamable_http(stack, params, headers)
        elif isinstance(params, SseConnectionParams):
            read, write = await _enter_sse(stack, params, headers)
        else:
            stdio = mcp_module("mcp.client.stdio")
            streams = await stack.enter_async_context(
                stdio.stdio_client(params.server_params, errlog=self.errlog)
            )
            read, write = streams[0], streams[1]
        # No session-wide read timeout: it would also bound the handshake, which may take
        # longer (see _MIN_STARTUP_TIMEOUT); ``request`` bounds each call instead.
        options: dict[str, Any] = {}
        if self.sampling_callback is not None:
            options["sampling_callback"] = self.sampling_callback
        if self.sampling_capabilities is not None:
            options["sampling_capabilities"] = self.sampling_capabilities
        session = await stack.enter_async_context(mcp.ClientSession(read, write, **options))
        await session.initialize()
        return session

    async def create_session(self, headers: dict[str, str] | None = None) -> Any:
        """The open session for ``headers``, connecting (and initializing) first if needed."""
        return await self._connection(headers).session()

    async def request(
        self,
        what: str,
        call: Callable[[Any], Awaitable[T]],
        *,
        headers: dict[str, str] | None = None,
        retry: bool = False,
    ) -> T:
        """``call(session)`` within the timeout; a ``TimeoutError`` names ``what``.

        ``retry=True`` (for calls that are safe to repeat, as listings are): when the
        connection turns out to be gone, reconnect and run it once more.
        """
        return await self._connection(headers).request(what, call, retry=retry)

    def generation(self, headers: dict[str, str] | None = None) -> int:
        """How many sessions have been opened for ``headers`` (a new one means a reconnection)."""
        return self._connection(headers).generation

    async def close(self) -> None:
        """End every session (a stdio server stops); a later request connects again."""
        connections = list(self._connections.values())
        self._connections.clear()
        for connection in connections:
            await connection.close()


async def list_all_pages(session: Any, method: str, field: str) -> list[Any]:
    """Every item of a paged MCP listing: ``list_all_pages(session, "list_tools", "tools")``."""
    listing = getattr(session, method)
    items: list[Any] = []
    result = await listing()
    items.extend(getattr(result, field))
    cursor = mcp_field(result, "next_cursor", "nextCursor")
    paged_by_params = _supports(listing, "params")
    while cursor:
        if paged_by_params:
            params = mcp_module("mcp.types").PaginatedRequestParams(cursor=cursor)
            result = await listing(params=params)
        else:
            result = await listing(cursor=cursor)
        items.extend(getattr(result, field))
        cursor = mcp_field(result, "next_cursor", "nextCursor")
    return items


def retry_on_errors(
    func: Callable[..., Awaitable[T]],
) -> Callable[..., Awaitable[T]]:
    """Decorate an async method so that it runs once more when it fails (ADK's decorator).

    For MCP calls that are safe to repeat: the second attempt finds the broken
    session replaced by a new one. Cancellation is never retried.
    """

    @functools.wraps(func)
    async def retried(*args: Any, **kwargs: Any) -> T:
        try:
            return await func(*args, **kwargs)
        except Exception as error:
            task = asyncio.current_task()
            if (task is not None and task.cancelling()) or _was_cancelled(error):
                raise
            logger.info("retrying %s after an error: %r", func.__name__, error)
            return await func(*args, **kwargs)

    return retried


def _was_cancelled(error: BaseException) -> bool:
    """Whether a cancellation is among ``error``'s causes (cleanup may have translated it)."""
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, asyncio.CancelledError):
            return True
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return False


__all__ = [
    "CheckableMcpHttpClientFactory",
    "ConnectionParams",
    "MCPSessionManager",
    "SseConnectionParams",
    "SseServerParams",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
    "StreamableHTTPServerParams",
    "create_mcp_http_client",
    "retry_on_errors",
]
