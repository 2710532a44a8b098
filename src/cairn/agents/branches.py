"""Branch names: who may see which events.

A branch is a dotted path. A ``ParallelAgent``'s sub-agent works on
``<parent>.<child>``, a workflow node's agent on ``<node>@<run>`` segments (the run a
decimal number), and an agent serving a function call — an ``AgentTool``'s agent, a
task or single_turn sub-agent — on ``<name>@<call id>``. The visibility rule is ADK's:
an agent sees the events of its own branch and of its ancestors, and an agent with no
branch sees every branch, except the runs serving a call. Those are private to the
agent serving it, as in ADK (which keeps an ``AgentTool``'s run in a throwaway session
and scopes a task agent's events to the call); cairn keeps them in the log, so that a
pause inside can resume.
"""

from __future__ import annotations


def call_branch(caller_branch: str | None, name: str, call_id: str | None) -> str:
    """The branch the agent ``name`` serves one call on."""
    call = call_id or ""
    if call.isdecimal():  # never to be read as a workflow run number
        call = f"call-{call}"
    own = f"{name}@{call}"
    return f"{caller_branch}.{own}" if caller_branch else own


def serves_a_call(branch: str | None) -> bool:
    """Whether ``branch`` is (under) the run of an agent serving a function call."""
    if not branch:
        return False
    for segment in branch.split("."):
        _, at, run = segment.rpartition("@")
        if at and not run.isdecimal():
            return True
    return False


def parent_branch(branch: str | None) -> str | None:
    """The branch one level up (None at the top)."""
    return branch.rsplit(".", 1)[0] if branch and "." in branch else None


def sees(branch: str | None, event_branch: str | None) -> bool:
    """Whether an agent on ``branch`` sees an event on ``event_branch``."""
    if not event_branch:
        return True
    if not branch:
        return not serves_a_call(event_branch)
    return branch == event_branch or branch.startswith(event_branch + ".")
