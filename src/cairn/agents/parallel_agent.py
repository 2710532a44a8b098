"""ParallelAgent: runs its sub-agents at the same time, each on its own branch."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncGenerator
from typing import ClassVar

from cairn.agents.base_agent import BaseAgent
from cairn.agents.base_agent_config import BaseAgentConfig
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.parallel_agent_config import ParallelAgentConfig
from cairn.agents.sub_agent_runs import (
    in_scope,
    marker,
    run_start,
    subtree_names,
    waiting_since,
)
from cairn.events.event import Event
from cairn.events.interrupts import interrupt_calls


def child_branch(ctx: InvocationContext, parent: BaseAgent, child: BaseAgent) -> str:
    """The branch a parallel agent's sub-agent works on: ``<branch>.<parent>.<child>``."""
    own = f"{parent.name}.{child.name}"
    return f"{ctx.branch}.{own}" if ctx.branch else own


class ParallelAgent(BaseAgent):
    """A shell agent that runs its sub-agents concurrently, as ADK's does.

    Each sub-agent works on its own branch (``parallel.child``): it sees the history
    that led here and its own events, not its siblings'. State is shared, so
    sub-agents writing the same key leave the value written last. An escalation by a
    sub-agent stops the others. Every event is committed before the sub-agent that
    yielded it goes on. If some sub-agent pauses, the others finish, then the
    invocation pauses; on resume only the sub-agents that did not finish run.
    """

    config_type: ClassVar[type[BaseAgentConfig]] = ParallelAgentConfig

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        if not self.sub_agents:
            return
        events = ctx.session.events
        begun = run_start(ctx)
        mine = subtree_names(self)
        resuming = False
        for event in events[begun:]:
            if event.invocation_id != ctx.invocation_id or not in_scope(event, ctx.branch):
                continue
            if event.author == self.name and event.actions.end_of_agent:
                return  # done already in this invocation
            resuming = resuming or event.author in mine
        saved = not resuming and self.name in ctx.agent_states
        if not resuming:
            begun = len(events)
            if ctx.is_resumable and not saved:
                yield marker(ctx, self, state={})
        # Resumed from ctx.agent_states (ADK's in-memory markers): the sub-agents recorded
        # there as done do not run again.
        runs = [
            child.run_async(
                dataclasses.replace(ctx, branch=child_branch(ctx, self, child), run_start=begun)
            )
            for child in self.sub_agents
            if not (resuming and self._finished(ctx, child, begun))
            and not (saved and ctx.end_of_agents.get(child.name))
        ]
        names = {child.name for child in self.sub_agents}
        async with contextlib.aclosing(_merged(runs, names)) as merged:
            async for event in merged:
                yield event
        if ctx.end_invocation or ctx.flags.transfer_to:
            return
        if waiting_since(ctx.session.events, begun, ctx.invocation_id, ctx.branch):
            return  # paused: the unfinished sub-agents go on when the answers come
        if ctx.is_resumable:
            yield marker(ctx, self, end=True)

    def _finished(self, ctx: InvocationContext, child: BaseAgent, begun: int) -> bool:
        """The sub-agent ran to its end in this run: its end marker is logged, or it left
        events and none of them paused."""
        branch = child_branch(ctx, self, child)
        ran = paused = False
        for event in ctx.session.events[begun:]:
            if event.invocation_id != ctx.invocation_id or not in_scope(event, branch):
                continue
            if event.author == child.name and event.actions.end_of_agent:
                return True
            ran = ran or event.author != "user"
            paused = paused or bool(interrupt_calls(event))
        return ran and not paused


async def _merged(
    runs: list[AsyncGenerator[Event, None]], names: set[str]
) -> AsyncGenerator[Event, None]:
    """The sub-agents' events as they come; each sub-agent waits until its event has been
    taken (and so committed) before it goes on. An escalation by one of ``names`` stops
    the others; a sub-agent's error stops them all and is raised."""
    channel: asyncio.Queue[tuple[Event | None, asyncio.Future[None] | BaseException | None]]
    channel = asyncio.Queue()

    async def drive(run: AsyncGenerator[Event, None]) -> None:
        failure: BaseException | None = None
        try:
            async with contextlib.aclosing(run) as events:
                async for event in events:
                    taken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                    await channel.put((event, taken))
                    await taken
        except Exception as error:  # handed to the consumer, which raises it
            failure = error
        finally:
            await channel.put((None, failure))

    tasks = [asyncio.create_task(drive(run)) for run in runs]
    remaining = len(tasks)
    try:
        while remaining:
            event, signal = await channel.get()
            if event is None:
                remaining -= 1
                if isinstance(signal, BaseException):
                    raise signal
                continue
            yield event
            if event.actions.escalate and event.author in names:
                return
            if isinstance(signal, asyncio.Future):
                signal.set_result(None)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


__all__ = ["ParallelAgent"]
