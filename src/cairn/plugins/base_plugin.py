"""Plugins: hooks that see every invocation of a Runner, every agent, model call and tool call."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn.agents.base_agent import BaseAgent
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.tools.base_tool import BaseTool


class BasePlugin:
    """Override the hooks you need; each returns None to let things go on unchanged.

    A Runner calls its plugins in registration order, before the agent's own
    callbacks of the same kind. The first non-None result short-circuits: the
    remaining plugins and the agent's callbacks are skipped, and the result
    replaces the step (the user's message, the invocation's reply, the event,
    the agent's run, the model call or response, the tool call or result). A
    hook may be ``async def`` or a plain ``def`` (run off the event loop).

    What a hook writes through its context (``callback_context.state``,
    ``tool_context.state``, artifacts) and any replacement it returns is part
    of an event, committed before anyone sees it; on resume it is read back
    from the log, never computed again (``docs/plugins.md``).
    """

    def __init__(self, name: str) -> None:
        self.name = name

    # -- the invocation ------------------------------------------------------------------
    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        """The user's message, before it is stored: a Content returned is stored instead."""
        return None

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        """Before the root agent runs: a Content returned ends the invocation with it as the
        reply (an event authored ``model``); no agent runs."""
        return None

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        """Each event the invocation produces, before it is stored and yielded: an Event
        returned is stored and yielded instead."""
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """The invocation ended (finished, paused, or its caller stopped reading); not after
        an error (``on_run_error_callback`` hears of that)."""
        return None

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        """An exception escaped the invocation. A notification: the error is raised on once
        every plugin heard of it; a plugin's own failure here is logged."""
        return None

    # -- agents --------------------------------------------------------------------------
    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None:
        """Before an agent runs: a Content returned is the agent's reply and it does not run."""
        return None

    async def after_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None:
        """After an agent finished: a Content returned is added as its reply."""
        return None

    async def on_agent_error_callback(
        self, *, agent: BaseAgent, callback_context: Context, error: Exception
    ) -> None:
        """An exception escaped ``agent``'s run (its after callbacks do not run). A
        notification only, as in ADK: the error is raised on after every plugin saw it."""
        return None

    # -- model calls ---------------------------------------------------------------------
    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Before a model call; ``llm_request`` may be edited. A response returned is used
        instead of calling the model (and is final: no after-model hook edits it)."""
        return None

    async def after_model_callback(
        self, *, callback_context: Context, llm_response: LlmResponse
    ) -> LlmResponse | None:
        """The model's response: a response returned replaces it."""
        return None

    async def on_model_error_callback(
        self, *, callback_context: Context, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        """A model call raised: a response returned is used instead of the error."""
        return None

    # -- tool calls ----------------------------------------------------------------------
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict[str, Any] | None:
        """Before a tool runs; ``tool_args`` may be edited. A dict returned is the call's
        result and the tool does not run."""
        return None

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        """A tool call's result: a dict returned replaces it."""
        return None

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        error: Exception,
    ) -> dict[str, Any] | None:
        """A tool raised (or the call names no tool: a ``ValueError``): a dict returned is
        the call's result instead of the error."""
        return None

    async def close(self) -> None:
        """Release what the plugin holds; called by ``Runner.close()``."""
        return None
