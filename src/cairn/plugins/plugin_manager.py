"""Runs a Runner's plugins in order; the first one that returns a value wins."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal, cast

from google.genai import types

from cairn.agents.base_agent import BaseAgent
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.plugins.base_plugin import BasePlugin
from cairn.tools.base_tool import BaseTool
from cairn.user_code import call_user_code

logger = logging.getLogger(__name__)

PluginCallbackName = Literal[
    "on_user_message_callback",
    "before_run_callback",
    "after_run_callback",
    "on_event_callback",
    "before_agent_callback",
    "after_agent_callback",
    "before_tool_callback",
    "after_tool_callback",
    "before_model_callback",
    "after_model_callback",
    "on_tool_error_callback",
    "on_model_error_callback",
    "on_agent_error_callback",
    "on_run_error_callback",
]
"""The name of each hook of ``BasePlugin``."""


class PluginManager:
    """Calls each hook on every plugin in registration order until one returns non-None.

    A plugin that raises stops the step with a ``RuntimeError`` naming the plugin and the
    hook (the plugin's exception chained), as in ADK. The error hooks
    (``on_agent_error_callback``, ``on_run_error_callback``) are notifications: every
    plugin hears of the error, and a plugin failing there is logged, never raised.
    """

    def __init__(self, plugins: list[BasePlugin] | None = None, close_timeout: float = 5.0) -> None:
        self.plugins: list[BasePlugin] = []
        self._close_timeout = close_timeout
        self._skip_closing_plugins = False
        for plugin in plugins or []:
            self.register_plugin(plugin)

    def register_plugin(self, plugin: BasePlugin) -> None:
        if not isinstance(plugin, BasePlugin):
            raise TypeError(
                f"plugins are BasePlugin instances; got {type(plugin).__name__}. Subclass "
                "cairn.plugins.BasePlugin and pass an instance: plugins=[MyPlugin(name=...)]"
            )
        if any(p.name == plugin.name for p in self.plugins):
            raise ValueError(
                f"a plugin named {plugin.name!r} is already registered; plugin names must be "
                "unique — give the second instance another name"
            )
        self.plugins.append(plugin)

    def get_plugin(self, plugin_name: str) -> BasePlugin | None:
        return next((p for p in self.plugins if p.name == plugin_name), None)

    def set_skip_closing_plugins(self, value: bool) -> None:
        """With True, ``close()`` leaves the plugins open (another component owns them)."""
        self._skip_closing_plugins = value

    async def _run_callbacks(self, callback_name: PluginCallbackName, **kwargs: Any) -> Any:
        """Call ``callback_name`` on each plugin in order; the first non-None result."""
        for plugin in self.plugins:
            try:
                result = await call_user_code(getattr(plugin, callback_name), **kwargs)
            except Exception as error:
                message = (
                    f"Error in plugin '{plugin.name}' during '{callback_name}' callback: {error}"
                )
                logger.error(message, exc_info=True)
                raise RuntimeError(message) from error
            if result is not None:
                return result
        return None

    async def _run_notification_callbacks(
        self, callback_name: PluginCallbackName, **kwargs: Any
    ) -> None:
        """Call ``callback_name`` on every plugin; a plugin's failure is logged, not raised."""
        for plugin in self.plugins:
            try:
                await call_user_code(getattr(plugin, callback_name), **kwargs)
            except Exception:
                logger.exception(
                    "plugin %r failed in %s; the original error is raised on",
                    plugin.name,
                    callback_name,
                )

    # -- the invocation ------------------------------------------------------------------
    async def run_on_user_message_callback(
        self, *, user_message: types.Content, invocation_context: InvocationContext
    ) -> types.Content | None:
        return cast(
            "types.Content | None",
            await self._run_callbacks(
                "on_user_message_callback",
                user_message=user_message,
                invocation_context=invocation_context,
            ),
        )

    async def run_before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        return cast(
            "types.Content | None",
            await self._run_callbacks("before_run_callback", invocation_context=invocation_context),
        )

    async def run_after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        await self._run_callbacks("after_run_callback", invocation_context=invocation_context)

    async def run_on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        return cast(
            "Event | None",
            await self._run_callbacks(
                "on_event_callback", invocation_context=invocation_context, event=event
            ),
        )

    async def run_on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        await self._run_notification_callbacks(
            "on_run_error_callback", invocation_context=invocation_context, error=error
        )

    # -- agents --------------------------------------------------------------------------
    async def run_before_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None:
        return cast(
            "types.Content | None",
            await self._run_callbacks(
                "before_agent_callback", agent=agent, callback_context=callback_context
            ),
        )

    async def run_after_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None:
        return cast(
            "types.Content | None",
            await self._run_callbacks(
                "after_agent_callback", agent=agent, callback_context=callback_context
            ),
        )

    async def run_on_agent_error_callback(
        self, *, agent: BaseAgent, callback_context: Context, error: Exception
    ) -> None:
        await self._run_notification_callbacks(
            "on_agent_error_callback", agent=agent, callback_context=callback_context, error=error
        )

    # -- model calls ---------------------------------------------------------------------
    async def run_before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        return cast(
            "LlmResponse | None",
            await self._run_callbacks(
                "before_model_callback", callback_context=callback_context, llm_request=llm_request
            ),
        )

    async def run_after_model_callback(
        self, *, callback_context: Context, llm_response: LlmResponse
    ) -> LlmResponse | None:
        return cast(
            "LlmResponse | None",
            await self._run_callbacks(
                "after_model_callback",
                callback_context=callback_context,
                llm_response=llm_response,
            ),
        )

    async def run_on_model_error_callback(
        self, *, callback_context: Context, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        return cast(
            "LlmResponse | None",
            await self._run_callbacks(
                "on_model_error_callback",
                callback_context=callback_context,
                llm_request=llm_request,
                error=error,
            ),
        )

    # -- tool calls ----------------------------------------------------------------------
    async def run_before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict[str, Any] | None:
        return cast(
            "dict[str, Any] | None",
            await self._run_callbacks(
                "before_tool_callback", tool=tool, tool_args=tool_args, tool_context=tool_context
            ),
        )

    async def run_after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        return cast(
            "dict[str, Any] | None",
            await self._run_callbacks(
                "after_tool_callback",
                tool=tool,
                tool_args=tool_args,
                tool_context=tool_context,
                result=result,
            ),
        )

    async def run_on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        error: Exception,
    ) -> dict[str, Any] | None:
        return cast(
            "dict[str, Any] | None",
            await self._run_callbacks(
                "on_tool_error_callback",
                tool=tool,
                tool_args=tool_args,
                tool_context=tool_context,
                error=error,
            ),
        )

    async def run_on_tool_cancelled_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        error: BaseException,
    ) -> None:
        """A tool call was cancelled (the invocation was): every plugin's
        ``on_tool_error_callback`` is given the ``CancelledError``, to release what its
        ``before_tool_callback`` took, as ADK does. Answers are ignored (a cancelled call is
        never recovered) and failures logged."""
        await self._run_notification_callbacks(
            "on_tool_error_callback",
            tool=tool,
            tool_args=tool_args,
            tool_context=tool_context,
            error=error,
        )

    # -- closing -------------------------------------------------------------------------
    async def close(self) -> None:
        """Close every plugin, each within ``close_timeout`` seconds. All are closed even if
        some fail; then a ``RuntimeError`` names those that failed (as ADK raises)."""
        if self._skip_closing_plugins:
            return
        failures: dict[str, BaseException] = {}
        cancelled: asyncio.CancelledError | None = None
        for plugin in self.plugins:
            try:
                async with asyncio.timeout(self._close_timeout):
                    await call_user_code(plugin.close)
            except asyncio.CancelledError as error:
                cancelled = error
            except Exception as error:
                logger.exception("plugin %r failed to close", plugin.name)
                failures[plugin.name] = error
        if cancelled is not None:
            raise cancelled
        if failures:
            summary = ", ".join(f"'{name}': {type(e).__name__}" for name, e in failures.items())
            raise RuntimeError(f"Failed to close plugins: {summary}")
