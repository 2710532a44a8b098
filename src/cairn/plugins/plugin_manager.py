"""Runs a Runner's plugins in order; the first one that returns a value wins."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

from google.genai import types

from cairn.agents.base_agent import BaseAgent
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event
from cairn.plugins.base_plugin import BasePlugin
from cairn.user_code import call_user_code

logger = logging.getLogger(__name__)


class PluginManager:
    """Calls each hook on every plugin in registration order until one returns non-None."""

    def __init__(self, plugins: list[BasePlugin] | None = None) -> None:
        self.plugins: list[BasePlugin] = []
        for plugin in plugins or []:
            self.register_plugin(plugin)

    def register_plugin(self, plugin: BasePlugin) -> None:
        if any(p.name == plugin.name for p in self.plugins):
            raise ValueError(
                f"a plugin named {plugin.name!r} is already registered; plugin names must be "
                "unique — give the second instance another name"
            )
        self.plugins.append(plugin)

    def get_plugin(self, name: str) -> BasePlugin | None:
        return next((p for p in self.plugins if p.name == name), None)

    async def _first_answer(self, hook: str, **kwargs: Any) -> Any:
        """Call ``hook`` on each plugin in order; return the first non-None result."""
        for plugin in self.plugins:
            result = await call_user_code(getattr(plugin, hook), **kwargs)
            if result is not None:
                return result
        return None

    async def run_on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        return cast(
            "types.Content | None",
            await self._first_answer(
                "on_user_message_callback",
                invocation_context=invocation_context,
                user_message=user_message,
            ),
        )

    async def run_before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        return cast(
            "types.Content | None",
            await self._first_answer("before_run_callback", invocation_context=invocation_context),
        )

    async def run_on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        return cast(
            "Event | None",
            await self._first_answer(
                "on_event_callback", invocation_context=invocation_context, event=event
            ),
        )

    async def run_after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        for plugin in self.plugins:
            await call_user_code(plugin.after_run_callback, invocation_context=invocation_context)

    async def run_before_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None:
        return cast(
            "types.Content | None",
            await self._first_answer(
                "before_agent_callback", agent=agent, callback_context=callback_context
            ),
        )

    async def run_after_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None:
        return cast(
            "types.Content | None",
            await self._first_answer(
                "after_agent_callback", agent=agent, callback_context=callback_context
            ),
        )

    async def run_on_agent_error_callback(
        self, *, agent: BaseAgent, callback_context: Context, error: Exception
    ) -> None:
        """Tell every plugin that ``error`` escaped ``agent``'s run. A plugin's own failure
        here is logged, never raised: the agent's error is the one the caller sees."""
        for plugin in self.plugins:
            try:
                await call_user_code(
                    plugin.on_agent_error_callback,
                    agent=agent,
                    callback_context=callback_context,
                    error=error,
                )
            except Exception:
                logger.exception(
                    "plugin %r failed in on_agent_error_callback for agent %r; the agent's "
                    "own error is raised",
                    plugin.name,
                    agent.name,
                )

    async def close(self, timeout: float = 5.0) -> None:
        """Close every plugin, each within ``timeout`` seconds; failures are logged, not raised."""
        for plugin in self.plugins:
            try:
                await asyncio.wait_for(plugin.close(), timeout)
            except Exception:
                logger.exception("plugin %r failed to close", plugin.name)
