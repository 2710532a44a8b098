"""A plugin hears of an exception that escapes an agent's run (``on_agent_error_callback``),
and the exception still reaches the caller unchanged; the agent's after callbacks do not run."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from cairn.agents.base_agent import BaseAgent
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event
from cairn.plugins.base_plugin import BasePlugin
from cairn.plugins.plugin_manager import PluginManager
from cairn.sessions import InMemorySessionService

BOOM = RuntimeError("the agent broke")


class Breaks(BaseAgent):
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        raise BOOM
        yield  # pragma: no cover


class Watcher(BasePlugin):
    def __init__(self, name: str, *, fails: bool = False) -> None:
        super().__init__(name)
        self.fails = fails
        self.errors: list[tuple[str, Exception]] = []
        self.after = False

    async def on_agent_error_callback(
        self, *, agent: Any, callback_context: Any, error: Any
    ) -> None:
        self.errors.append((agent.name, error))
        if self.fails:
            raise ValueError("the plugin broke too")

    async def after_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
        self.after = True


async def test_every_plugin_hears_of_the_error_and_the_caller_gets_it_unchanged() -> None:
    first, second = Watcher("first", fails=True), Watcher("second")
    service = InMemorySessionService()
    agent = Breaks(name="breaker")
    ctx = InvocationContext(
        session_service=service,
        invocation_id="inv",
        agent=agent,
        session=await service.create_session(app_name="app", user_id="ann"),
        plugin_manager=PluginManager(plugins=[first, second]),
    )
    with pytest.raises(RuntimeError) as raised:
        [e async for e in agent.run_async(ctx)]
    assert raised.value is BOOM  # not the plugin's own failure
    assert first.errors == [("breaker", BOOM)] and second.errors == [("breaker", BOOM)]
    assert not first.after and not second.after
