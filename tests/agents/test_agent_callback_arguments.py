"""Agent callbacks are called as ADK calls them: ``callback_context=`` by keyword when the
callback has that parameter (or ``**kwargs``); any other one-parameter callback positionally."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from cairn.agents.base_agent import BaseAgent
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event
from cairn.sessions import InMemorySessionService


class Quiet(BaseAgent):
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        return
        yield  # pragma: no cover


async def test_callbacks_get_the_context_by_keyword_or_by_position() -> None:
    seen: list[tuple[str, Any]] = []

    def adk_style(callback_context: Context) -> None:
        seen.append(("adk_style", callback_context))

    def by_kwargs(**kwargs: Any) -> None:
        seen.append(("by_kwargs", kwargs["callback_context"]))

    def other_name(ctx: Context) -> None:
        seen.append(("other_name", ctx))

    agent = Quiet(name="quiet", before_agent_callback=[adk_style, by_kwargs, other_name])
    service = InMemorySessionService()
    ctx = InvocationContext(
        session_service=service,
        invocation_id="inv",
        agent=agent,
        session=await service.create_session(app_name="app", user_id="ann"),
    )
    assert [e async for e in agent.run_async(ctx)] == []
    assert [name for name, _ in seen] == ["adk_style", "by_kwargs", "other_name"]
    assert all(isinstance(context, Context) for _, context in seen)
