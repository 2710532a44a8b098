"""Which agent of a tree continues a chat: the one that last held the conversation."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.agents.base_agent import BaseAgent
from cairn.events.event import Event


def _transferable(agent: BaseAgent, root: BaseAgent) -> bool:
    """The agent may keep the conversation: no agent on its path to the root forbids
    handing control back up (``disallow_transfer_to_parent``)."""
    current: BaseAgent | None = agent
    while current is not None and current is not root:
        if getattr(current, "disallow_transfer_to_parent", False):
            return False
        current = current.parent_agent
    return True


def find_agent_to_run(events: Sequence[Event], root: BaseAgent) -> tuple[BaseAgent, str | None]:
    """The agent that answers the newest user event, and the branch it works in.

    ADK's chat-mode routing: a function response goes to the agent whose call
    it answers. Otherwise the newest agent event decides: the target of a
    transfer that was not yet answered, else its author if that agent may keep
    the conversation, else the root.
    """
    if events and events[-1].author == "user":
        answered = {r.id for r in events[-1].get_function_responses() if r.id}
        if answered:
            for index in range(len(events) - 2, -1, -1):
                event = events[index]
                if any(call.id in answered for call in event.get_function_calls()):
                    found = root.find_agent(event.author)
                    return (found, event.branch) if found is not None else (root, None)
    for event in reversed(events):
        if event.author == "user":
            continue
        target = event.actions.transfer_to_agent
        if target:
            found = root.find_agent(target)
            if found is not None:
                return found, event.branch
        if event.author == root.name:
            return root, None
        agent = root.find_sub_agent(event.author)
        if agent is not None and _transferable(agent, root):
            return agent, event.branch
    return root, None
