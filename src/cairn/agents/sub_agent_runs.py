"""Where a shell agent (sequential, parallel, loop) stands in its invocation, read from the log.

A shell agent runs its sub-agents inside one invocation. When that invocation pauses (a
long-running tool, a confirmation, a credential inside a sub-agent) and is resumed later,
perhaps by another process, the shell agent reads this invocation's events to see which
sub-agents ran already: those are never run again; the one that paused goes on from its own
events. With a resumable App the log also holds ADK's markers (``agent_state`` naming the
sub-agent about to run, ``end_of_agent`` when an agent is done); without one, the authors of
the events tell the same story.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cairn.events.event import Event
from cairn.events.event_actions import EventActions
from cairn.events.interrupts import interrupt_calls, starts_invocation

if TYPE_CHECKING:
    from cairn.agents.base_agent import BaseAgent
    from cairn.agents.invocation_context import InvocationContext


@dataclasses.dataclass
class SubAgentRun:
    """One run of a sub-agent in the log: which one, and where its first event is."""

    index: int
    start: int
    marked: bool = False
    """The shell agent's ``agent_state`` marker announced this run."""


@dataclasses.dataclass
class Progress:
    """A shell agent's current run as its invocation's events record it."""

    runs: list[SubAgentRun]
    """Sub-agent runs in log order (empty: nothing ran yet)."""
    rounds: int = 0
    """Loop rounds finished before the latest run (from the marker, else counted)."""
    finished: bool = False
    """The agent's own ``end_of_agent`` marker is in the log: it is done."""


def run_start(ctx: InvocationContext) -> int:
    """The position in ``ctx.session.events`` where the running agent's current run begins:
    what its enclosing shell agent said, else the message that started the invocation."""
    if ctx.run_start is not None:
        return ctx.run_start
    events = ctx.session.events
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if event.invocation_id == ctx.invocation_id and starts_invocation(event):
            return index
    return 0


def in_scope(event: Event, branch: str | None) -> bool:
    """The event is on ``branch`` or below it (every event, for no branch)."""
    if branch is None:
        return True
    return event.branch is not None and (
        event.branch == branch or event.branch.startswith(branch + ".")
    )


def subtree_names(agent: BaseAgent) -> set[str]:
    names = {agent.name}
    for child in agent.sub_agents:
        names |= subtree_names(child)
    return names


def progress(ctx: InvocationContext, agent: BaseAgent) -> Progress:
    """Which of ``agent``'s sub-agents ran in its current run, from the log.

    A new run starts where a marker announces it, or where the author switches to another
    sub-agent's subtree; a loop's round ends where the next run is not after the last one.
    """
    owner = {
        name: index for index, child in enumerate(agent.sub_agents) for name in subtree_names(child)
    }
    names = [child.name for child in agent.sub_agents]
    found = Progress(runs=[])
    events = ctx.session.events
    for position in range(run_start(ctx), len(events)):
        event = events[position]
        if event.invocation_id != ctx.invocation_id or not in_scope(event, ctx.branch):
            continue
        if event.author == agent.name:
            state = event.actions.agent_state
            if event.actions.end_of_agent:
                found.finished = True
            elif state and state.get("current_sub_agent") in names:
                found.runs.append(
                    SubAgentRun(names.index(state["current_sub_agent"]), position, True)
                )
                found.rounds = int(state.get("times_looped", found.rounds))
            continue
        index = owner.get(event.author)
        if index is None:
            continue
        latest = found.runs[-1] if found.runs else None
        if latest is not None and latest.index == index:
            continue  # the same run goes on
        if latest is not None and index < latest.index:
            found.rounds += 1  # no marker: a loop went round
        found.runs.append(SubAgentRun(index, position))
    return found


def saved_start(ctx: InvocationContext, agent: BaseAgent) -> tuple[int, int] | None:
    """Where ``agent`` resumes from its entry in ``ctx.agent_states`` (ADK's in-memory
    markers, e.g. set by the caller), when the log shows none of its current run: the index
    of the sub-agent named ``current_sub_agent`` and the loop rounds finished
    (``times_looped``). None when it has no such entry (an empty one is ADK's placeholder)."""
    saved = ctx.agent_states.get(agent.name) or {}
    names = [child.name for child in agent.sub_agents]
    current = saved.get("current_sub_agent")
    if current not in names:
        return None
    return names.index(current), int(saved.get("times_looped", 0))


def waiting_since(
    events: Sequence[Event], start: int, invocation_id: str, branch: str | None
) -> bool:
    """Whether an interrupt of this invocation logged from ``start`` on (on ``branch`` or
    below it) still waits for its answer."""
    answered: set[str] = set()
    asked: set[str] = set()
    for event in events[start:]:
        if event.content is None or event.invocation_id != invocation_id:
            continue  # no content: neither a call nor an answer
        answered.update(r.id for r in event.get_function_responses() if r.id)
        if in_scope(event, branch):
            asked.update(call.id for call in interrupt_calls(event) if call.id)
    return bool(asked - answered)


def marker(
    ctx: InvocationContext,
    agent: BaseAgent,
    *,
    state: dict[str, Any] | None = None,
    end: bool = False,
) -> Event:
    """ADK's content-less marker event: the agent's state (the sub-agent about to run), or
    that it is done. Written only with a resumable App, as ADK writes it; ``ctx``'s
    ``agent_states`` and ``end_of_agents`` (ADK's in-memory view) record it too."""
    if end:
        ctx.end_of_agents[agent.name] = True
        ctx.agent_states.pop(agent.name, None)
    else:
        ctx.agent_states[agent.name] = dict(state or {})
        ctx.end_of_agents[agent.name] = False
    return Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        actions=EventActions(
            agent_state=None if end else state, end_of_agent=True if end else None
        ),
    )


def unfinished_hand_overs(ctx: InvocationContext, agent: BaseAgent) -> list[BaseAgent]:
    """The agents above ``agent``, innermost first, that handed the conversation down to it
    (a ``transfer_to_agent`` in this invocation, run nested) and are not marked done yet:
    when a resumed ``agent`` finishes, they are done too (ADK writes their end markers
    then). Stops at the first ancestor that did not hand over."""
    handed: set[str] = set()
    ended: set[str] = set()
    for event in ctx.session.events:
        if event.invocation_id != ctx.invocation_id:
            continue
        if event.actions.transfer_to_agent:
            handed.add(event.author)
        if event.actions.end_of_agent:
            ended.add(event.author)
    found: list[BaseAgent] = []
    current = agent.parent_agent
    while current is not None and current.name in handed:
        if current.name not in ended:
            found.append(current)
        current = current.parent_agent
    return found
