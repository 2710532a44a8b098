"""SequentialAgent: runs its sub-agents one after another in one invocation."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncGenerator
from typing import ClassVar

from cairn.agents.base_agent import BaseAgent, BaseAgentState
from cairn.agents.base_agent_config import BaseAgentConfig
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.sequential_agent_config import SequentialAgentConfig
from cairn.agents.sub_agent_runs import marker, progress, saved_start, waiting_since
from cairn.events.event import Event


class SequentialAgentState(BaseAgentState):
    """A sequential agent's marker: the sub-agent about to run."""

    current_sub_agent: str = ""


class SequentialAgent(BaseAgent):
    """A shell agent that runs its sub-agents in order, as ADK's does.

    The sub-agents share the conversation: each sees the whole history of the
    invocation (the user's message and what the earlier ones said and did), and
    they work on the same branch. A sub-agent that pauses (a long-running tool, a
    confirmation) pauses the sequence; when the answer comes, the sequence goes on
    from the log: the sub-agents that ran are not run again.
    """

    config_type: ClassVar[type[BaseAgentConfig]] = SequentialAgentConfig

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        if not self.sub_agents:
            return
        found = progress(ctx, self)
        if found.finished:
            return
        latest = found.runs[-1] if found.runs else None
        first = latest.index if latest is not None else 0
        begun = latest.start if latest is not None else None
        saved = saved_start(ctx, self) if latest is None else None
        if saved is not None:  # resumed from ctx.agent_states: that sub-agent goes on
            first, begun = saved[0], len(ctx.session.events)
        for child in self.sub_agents[first:]:
            if begun is None:
                begun = len(ctx.session.events)
                if ctx.is_resumable:
                    state = SequentialAgentState(current_sub_agent=child.name)
                    yield marker(ctx, self, state=state.model_dump())
            child_ctx = dataclasses.replace(ctx, run_start=begun)
            async with contextlib.aclosing(child.run_async(child_ctx)) as events:
                async for event in events:
                    yield event
            if ctx.end_invocation or ctx.flags.transfer_to:
                return
            if waiting_since(ctx.session.events, begun, ctx.invocation_id, ctx.branch):
                return  # paused: the rest runs when the answer comes
            begun = None
        if ctx.is_resumable:
            yield marker(ctx, self, end=True)

    async def _run_live_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """A live run: each sub-agent's live run, in order (as ADK's)."""
        for child in self.sub_agents:
            async with contextlib.aclosing(child.run_live(ctx)) as events:
                async for event in events:
                    yield event
            if ctx.end_invocation:
                return


__all__ = ["SequentialAgent", "SequentialAgentState"]
