"""Which agent of a tree continues a chat: the one that last held the conversation."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.agents.base_agent import BaseAgent
from cairn.agents.parallel_agent import ParallelAgent
from cairn.events.event import Event
from cairn.events.interrupts import interrupted_calls


def _transferable(agent: BaseAgent, root: BaseAgent) -> bool:
    """The agent may keep the conversation: it and every agent on its path to the root are
    LLM agents (an agent under a sequential, parallel or loop agent is not; the shell agent
    decides who runs) and none forbids handing control back up
    (``disallow_transfer_to_parent``)."""
    current: BaseAgent | None = agent
    while current is not None and current is not root:
        allowed = getattr(current, "disallow_transfer_to_parent", None)
        if allowed is None or allowed:
            return False
        current = current.parent_agent
    return True


def _resumed(agent: BaseAgent, branch: str | None, root: BaseAgent) -> tuple[BaseAgent, str | None]:
    """The agent that resumes a paused ``agent``: the outermost of the shell agents
    (sequential, parallel, loop) it runs inside, below the nearest LLM agent, so that the
    sequence goes on after the answer; ``agent`` itself when it runs under none."""
    current = agent
    while current.parent_agent is not None and current is not root:
        parent = current.parent_agent
        if hasattr(parent, "disallow_transfer_to_parent"):
            break  # an LLM agent: its sub-agent answers for itself
        if isinstance(parent, ParallelAgent) and branch is not None:
            own = f"{parent.name}.{current.name}"  # the branch the parallel agent gave it
            if branch == own:
                branch = None
            elif branch.endswith("." + own):
                branch = branch[: -len(own) - 1]
        current = parent
    return current, branch


def find_agent_to_run(events: Sequence[Event], root: BaseAgent) -> tuple[BaseAgent, str | None]:
    """The agent that answers the newest user event, and the branch it works in.

    ADK's chat-mode routing: a function response goes to the agent whose call
    it answers (and an invocation that stopped in the middle of a call goes back to the
    agent that made it). Otherwise the newest agent event decides: the target of a
    transfer that was not yet answered, else its author if that agent may keep
    the conversation, else the root.
    """
    if events and events[-1].author != "user" and interrupted_calls(events[-1], set()):
        # A call its process never finished: the agent that made it settles it on resume.
        found = root.find_agent(events[-1].author)
        if found is not None:
            return _resumed(found, events[-1].branch, root)
    if events and events[-1].author == "user":
        answered = {r.id for r in events[-1].get_function_responses() if r.id}
        if answered:
            for index in range(len(events) - 2, -1, -1):
                event = events[index]
                if any(call.id in answered for call in event.get_function_calls()):
                    found = root.find_agent(event.author)
                    if found is None:
                        return root, None
                    return _resumed(found, event.branch, root)
    for event in reversed(events):
        if event.author == "user":
            continue
        target = event.actions.transfer_to_agent
        if target:
            found = root.find_agent(target)
            if found is not None and _transferable(found, root):
                return found, event.branch
        if event.author == root.name:
            return root, None
        agent = root.find_sub_agent(event.author)
        if agent is not None and _transferable(agent, root):
            return agent, event.branch
    return root, None
