"""Plugins: hooks that see every invocation of a Runner."""

from __future__ import annotations

from google.genai import types

from cairn.agents.base_agent import BaseAgent
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event


class BasePlugin:
    """Override the hooks you need; each returns None to let things proceed unchanged.

    A non-None return short-circuits, as in ADK: ``on_user_message_callback``
    replaces the user's message; ``before_run_callback`` ends the invocation
    with that content as the reply; ``on_event_callback`` replaces the event
    (before it is stored); ``before_agent_callback`` skips the agent with that
    content as its reply; ``after_agent_callback`` adds a reply.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        return None

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        return None

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        return None

    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None:
        return None

    async def after_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None:
        return None

    async def on_agent_error_callback(
        self, *, agent: BaseAgent, callback_context: Context, error: Exception
    ) -> None:
        """An exception escaped ``agent``'s run (its after callbacks do not run). A
        notification only, as in ADK: the error is raised on after every plugin saw it."""
        return None

    async def close(self) -> None:
        """Release what the plugin holds; called by ``Runner.close()``."""
        return None
