"""LoopAgent: runs its sub-agents in order, round after round, in one invocation."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncGenerator
from typing import ClassVar

from cairn.agents.base_agent import BaseAgent, BaseAgentState
from cairn.agents.base_agent_config import BaseAgentConfig
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.loop_agent_config import LoopAgentConfig
from cairn.agents.sub_agent_runs import (
    in_scope,
    marker,
    progress,
    saved_start,
    waiting_since,
)
from cairn.events.event import Event


class LoopAgentState(BaseAgentState):
    """A loop agent's marker: the sub-agent about to run, and the rounds finished."""

    current_sub_agent: str = ""
    times_looped: int = 0


class LoopAgent(BaseAgent):
    """A shell agent that runs its sub-agents in order, again and again, as ADK's does:
    until one of them escalates (``tool_context.actions.escalate = True``, e.g. the
    ``exit_loop`` tool) or ``max_iterations`` rounds have run (none: no limit; zero or
    less: no round at all).

    The sub-agents share the conversation (each round sees the earlier rounds). A pause
    inside a sub-agent pauses the loop; on resume it goes on from the log, in the same
    round, without running again what ran.
    """

    config_type: ClassVar[type[BaseAgentConfig]] = LoopAgentConfig
    max_iterations: int | None = None

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        if not self.sub_agents:
            return
        found = progress(ctx, self)
        if found.finished:
            return
        rounds = found.rounds
        latest = found.runs[-1] if found.runs else None
        first = latest.index if latest is not None else 0
        begun = latest.start if latest is not None else None
        saved = saved_start(ctx, self) if latest is None else None
        if saved is not None:  # resumed from ctx.agent_states: that sub-agent goes on
            (first, rounds), begun = saved, len(ctx.session.events)
        escalated = False
        while not escalated and (self.max_iterations is None or rounds < self.max_iterations):
            for child in self.sub_agents[first:]:
                if begun is None:
                    begun = len(ctx.session.events)
                    if ctx.is_resumable:
                        state = LoopAgentState(current_sub_agent=child.name, times_looped=rounds)
                        yield marker(ctx, self, state=state.model_dump())
                child_ctx = dataclasses.replace(ctx, run_start=begun)
                async with contextlib.aclosing(child.run_async(child_ctx)) as events:
                    async for event in events:
                        escalated = escalated or bool(event.actions.escalate)
                        yield event
                if ctx.end_invocation or ctx.flags.transfer_to:
                    return
                events_now = ctx.session.events
                if waiting_since(events_now, begun, ctx.invocation_id, ctx.branch):
                    return  # paused: the loop goes on when the answer comes
                escalated = escalated or any(
                    event.actions.escalate
                    for event in events_now[begun:]
                    if event.invocation_id == ctx.invocation_id and in_scope(event, ctx.branch)
                )
                begun = None
                if escalated:
                    break
            first = 0
            rounds += 1
            ctx.reset_sub_agent_states(self.name)  # the next round starts its sub-agents anew
        if ctx.is_resumable:
            yield marker(ctx, self, end=True)


__all__ = ["LoopAgent", "LoopAgentState"]
