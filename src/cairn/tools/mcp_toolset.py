"""The tools and resources of an MCP (Model Context Protocol) server, over stdio, SSE or
streamable HTTP.

Needs the ``mcp`` package (``pip install 'cairn[mcp]'``); importing this module
does not, so ``cairn.tools`` works without it. Works with ``mcp`` 1.x and 2.x.
"""

from __future__ import annotations

import inspect
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, Self, TextIO, cast, runtime_checkable

from google.genai import types
from pydantic import BaseModel, ConfigDict, model_validator

from cairn.tools.base_tool import BaseTool, BaseToolset, ToolPredicate
from cairn.tools.load_mcp_resource_tool import LoadMcpResourceTool
from cairn.tools.mcp_sessions import (
    ConnectionParams,
    MCPSessionManager,
    SseConnectionParams,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
    list_all_pages,
    mcp_field,
    mcp_module,
    normalized_connection_params,
)
from cairn.tools.tool_configs import BaseToolConfig, ToolArgsConfig

logger = logging.getLogger(__name__)

ProgressFnT = Callable[[float, "float | None", "str | None"], Awaitable[None]]
"""A progress callback, as mcp defines it: ``async (progress, total, message) -> None``."""


@runtime_checkable
class ProgressCallbackFactory(Protocol):
    """Makes the progress callback of one tool call (ADK's protocol).

    A plain (not async) function called as ``factory(tool_name, callback_context=ctx)``
    for each call, ``ctx`` being the call's ``ToolContext``; it returns a
    ``ProgressFnT`` or None (no progress wanted). Accept ``**kwargs``: more keywords
    may be passed later.
    """

    def __call__(
        self, tool_name: str, *, callback_context: Any = None, **kwargs: Any
    ) -> ProgressFnT | None: ...


class McpTool(BaseTool):
    """One tool of an MCP server: declared with the server's input (and output) schema, run by
    ``tools/call``.

    The result the model gets is the server's ``CallToolResult`` as ADK hands it over:
    ``content`` (a list of typed parts: ``{"type": "text", "text": ...}``, images, ...),
    ``structuredContent`` when the server sends it, and ``isError`` (a tool error is a
    result with ``isError: true``, its text in ``content``). ``progress_callback`` (a
    ``ProgressFnT``, or a ``ProgressCallbackFactory``) hears the server's progress
    notifications during a call.
    """

    def __init__(
        self,
        *,
        mcp_tool: Any,
        mcp_session_manager: MCPSessionManager,
        require_confirmation: bool | Callable[..., Any] = False,
        progress_callback: ProgressFnT | ProgressCallbackFactory | None = None,
    ) -> None:
        super().__init__(
            name=str(mcp_tool.name),
            description=str(mcp_tool.description or ""),
            require_confirmation=require_confirmation,
        )
        self.mcp_tool = mcp_tool
        self.progress_callback = progress_callback
        self._sessions = mcp_session_manager

    @property
    def raw_mcp_tool(self) -> Any:
        """The server's ``mcp.types.Tool`` (ADK's name)."""
        return self.mcp_tool

    @property
    def input_schema(self) -> dict[str, Any]:
        schema = mcp_field(self.mcp_tool, "input_schema", "inputSchema")
        return dict(schema) if schema else {"type": "object", "properties": {}}

    def declaration(self) -> types.FunctionDeclaration:
        output = mcp_field(self.mcp_tool, "output_schema", "outputSchema")
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema=self.input_schema,
            response_json_schema=dict(output) if output else None,
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        progress = self._progress_for(tool_context)
        name = str(self.mcp_tool.name)  # the server's name, whatever prefix the agent sees

        async def call(session: Any) -> Any:
            if progress is None:
                return await session.call_tool(name, dict(args or {}))
            return await session.call_tool(name, dict(args or {}), progress_callback=progress)

        result = await self._sessions.request(f"the call of tool {self.name!r}", call)
        return _tool_result(result)

    def _progress_for(self, tool_context: Any) -> ProgressFnT | None:
        """The progress callback of this call: the callback, or what the factory makes."""
        callback = self.progress_callback
        if callback is None or _is_async_callable(callback):
            return cast("ProgressFnT | None", callback)
        factory = cast(ProgressCallbackFactory, callback)
        return factory(str(self.mcp_tool.name), callback_context=tool_context)


def _is_async_callable(callback: Any) -> bool:
    return inspect.iscoroutinefunction(callback) or inspect.iscoroutinefunction(
        getattr(callback, "__call__", None)  # noqa: B004 - a callable object's own method
    )


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
    """The tools of one MCP server (ADK's ``McpToolset``), and its resources.

    ``connection_params`` is an ``mcp.StdioServerParameters`` (a server started
    as a subprocess), a ``StdioConnectionParams`` (the same, with a timeout), an
    ``SseConnectionParams`` or a ``StreamableHTTPConnectionParams`` (a server at a
    URL). The server is started or connected to on the first ``get_tools()``; its
    tools are listed then and kept (a reconnection lists them again). ``tool_filter``
    keeps the named tools, or those a predicate ``(tool, context) -> bool`` accepts.
    ``require_confirmation`` and ``progress_callback`` apply to each of its tools.

    ``use_mcp_resources=True`` adds the ``load_mcp_resource`` tool: the model is told
    the server's resources and sees those it asks for. ``list_resources()``,
    ``get_resource_info(name)`` and ``read_resource(name)`` read them from code.

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
        require_confirmation: bool | Callable[..., Any] = False,
        progress_callback: ProgressFnT | ProgressCallbackFactory | None = None,
        use_mcp_resources: bool | None = False,
        sampling_callback: Any = None,
        sampling_capabilities: Any = None,
    ) -> None:
        params = normalized_connection_params(connection_params, "McpToolset")
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        self.connection_params = params
        self.errlog = errlog
        self.require_confirmation = require_confirmation
        self.progress_callback = progress_callback
        self.use_mcp_resources = bool(use_mcp_resources)
        self._sessions = MCPSessionManager(
            params,
            errlog,
            sampling_callback=sampling_callback,
            sampling_capabilities=sampling_capabilities,
        )
        self._tools: list[McpTool] | None = None
        self._tools_generation = -1

    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        sessions = self._sessions
        await sessions.create_session()
        if self._tools is None or self._tools_generation != sessions.generation():
            listed = await sessions.request("the tools listing", _list_all_tools, retry=True)
            tools = [
                McpTool(
                    mcp_tool=tool,
                    mcp_session_manager=sessions,
                    require_confirmation=self.require_confirmation,
                    progress_callback=self.progress_callback,
                )
                for tool in listed
            ]
            # By name, as ADK declares them: the server's order is not part of the protocol.
            self._tools = sorted(tools, key=lambda tool: tool.name)
            self._tools_generation = sessions.generation()
        selected: list[BaseTool] = [
            tool for tool in self._tools if self._is_selected(tool, readonly_context)
        ]
        if self.use_mcp_resources:
            selected.append(LoadMcpResourceTool(mcp_toolset=self))
        return selected

    async def list_resources(self, readonly_context: Any = None) -> list[str]:
        """The names of the server's resources (ADK's method)."""
        return [str(resource.name) for resource in await self._resources()]

    async def get_resource_info(self, name: str, readonly_context: Any = None) -> dict[str, Any]:
        """What the server says about resource ``name``: its ``uri``, ``name``, ``mimeType``,
        ``description``... (MCP's key names); a ``ValueError`` if there is none."""
        resources = await self._resources()
        for resource in resources:
            if resource.name == name:
                info: dict[str, Any] = resource.model_dump(
                    mode="json", by_alias=True, exclude_none=True
                )
                return _meta_renamed(info)
        known = ", ".join(repr(str(r.name)) for r in resources) or "none"
        raise ValueError(
            f"the MCP server {self._sessions.description} has no resource named {name!r} "
            f"(it has: {known})"
        )

    async def read_resource(self, name: str, readonly_context: Any = None) -> list[Any]:
        """The contents of resource ``name`` (ADK's method): the server's
        ``TextResourceContents`` / ``BlobResourceContents`` (``text``, or base64 ``blob``)."""
        uri = (await self.get_resource_info(name, readonly_context))["uri"]
        result = await self._sessions.request(
            f"the reading of resource {name!r}",
            lambda session: session.read_resource(uri),
            retry=True,
        )
        return list(result.contents)

    async def _resources(self) -> list[Any]:
        return await self._sessions.request(
            "the resources listing", _list_all_resources, retry=True
        )

    @classmethod
    def from_config(cls, config: ToolArgsConfig, config_abs_path: str) -> Self:
        """``- name: McpToolset`` with ``args`` in ``McpToolsetConfig``'s shape. A stdio
        server (a command the config would start) is refused unless
        CAIRN_ALLOW_CONFIG_STDIO_MCP_SERVERS=1 (or ADK's ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS=1)
        says this app loads only configs it trusts."""
        parsed = McpToolsetConfig.model_validate(config.model_dump())
        stdio = parsed.stdio_server_params or parsed.stdio_connection_params
        if stdio is not None and not _config_stdio_allowed():
            raise ValueError(
                "a stdio MCP server in an agent config starts the command it names when the "
                "agent loads, so it is refused: build the McpToolset in Python and name it "
                "(`- name: my_agent.tools.my_toolset`), connect over HTTP "
                "(streamable_http_connection_params or sse_connection_params), or set "
                "CAIRN_ALLOW_CONFIG_STDIO_MCP_SERVERS=1 if this app loads only configs you trust"
            )
        return cls(
            parsed.connection_params(),
            tool_filter=parsed.tool_filter,
            tool_name_prefix=parsed.tool_name_prefix,
            use_mcp_resources=parsed.use_mcp_resources,
        )

    async def close(self) -> None:
        """End the session (and stop a stdio server); a later ``get_tools()`` reconnects."""
        self._tools = None
        await self._sessions.close()


async def _list_all_tools(session: Any) -> list[Any]:
    return await list_all_pages(session, "list_tools", "tools")


async def _list_all_resources(session: Any) -> list[Any]:
    return await list_all_pages(session, "list_resources", "resources")


def _config_stdio_allowed() -> bool:
    return any(
        os.environ.get(name, "").strip().lower() in ("1", "true", "yes")
        for name in ("CAIRN_ALLOW_CONFIG_STDIO_MCP_SERVERS", "ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS")
    )


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StdioServerConfig(_Params):
    """``mcp.StdioServerParameters`` as YAML: the server's command, args, env and cwd."""

    command: str
    args: list[str] = []
    env: dict[str, str] | None = None
    cwd: str | None = None

    def build(self) -> Any:
        return mcp_module().StdioServerParameters(**self.model_dump(exclude_none=True))


class StdioConnectionConfig(_Params):
    """``StdioConnectionParams`` as YAML."""

    server_params: StdioServerConfig
    timeout: float = 5.0


class SseConnectionConfig(_Params):
    """``SseConnectionParams`` as YAML."""

    url: str
    headers: dict[str, str] | None = None
    timeout: float = 5.0
    sse_read_timeout: float = 300.0


class StreamableHTTPConnectionConfig(SseConnectionConfig):
    """``StreamableHTTPConnectionParams`` as YAML."""

    terminate_on_close: bool = True


class McpToolsetConfig(BaseToolConfig):
    """The ``args`` of ``- name: McpToolset`` in an agent config: exactly one of the
    connection keys, and the toolset's ``tool_filter``, ``tool_name_prefix`` and
    ``use_mcp_resources``."""

    stdio_server_params: StdioServerConfig | None = None
    stdio_connection_params: StdioConnectionConfig | None = None
    sse_connection_params: SseConnectionConfig | None = None
    streamable_http_connection_params: StreamableHTTPConnectionConfig | None = None
    tool_filter: list[str] | None = None
    tool_name_prefix: str | None = None
    use_mcp_resources: bool = False

    @model_validator(mode="after")
    def _one_connection(self) -> McpToolsetConfig:
        given = [
            self.stdio_server_params,
            self.stdio_connection_params,
            self.sse_connection_params,
            self.streamable_http_connection_params,
        ]
        if sum(value is not None for value in given) != 1:
            raise ValueError(
                "give exactly one of stdio_server_params, stdio_connection_params, "
                "sse_connection_params or streamable_http_connection_params"
            )
        return self

    def connection_params(self) -> ConnectionParams:
        """The connection the config describes, as ``McpToolset`` takes it."""
        if self.stdio_server_params is not None:
            return StdioConnectionParams(server_params=self.stdio_server_params.build())
        if self.stdio_connection_params is not None:
            return StdioConnectionParams(
                server_params=self.stdio_connection_params.server_params.build(),
                timeout=self.stdio_connection_params.timeout,
            )
        if self.sse_connection_params is not None:
            return SseConnectionParams(**self.sse_connection_params.model_dump())
        assert self.streamable_http_connection_params is not None
        return StreamableHTTPConnectionParams(**self.streamable_http_connection_params.model_dump())


__all__ = [
    "McpTool",
    "McpToolset",
    "McpToolsetConfig",
    "ProgressCallbackFactory",
    "ProgressFnT",
    "SseConnectionParams",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
]
