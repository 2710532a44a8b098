"""The status of each node run of one invocation, read from its events' ``nodeInfo.path``."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.events.event import Event
from cairn.events.interrupts import answered_ids, interrupt_calls
from cairn.events.node_info import NodeInfo
from cairn.server.models import NodeStatus


def node_statuses(events: Sequence[Event], invocation_id: str) -> list[NodeStatus]:
    """Every node run (path) the invocation's events mention, in order of first appearance.

    ``completed``: its run finished (its output event names it in ``nodeInfo.outputFor``,
    or a nested workflow's end marker is on its path; a workflow whose output an event
    names, once every run inside it finished); ``waiting``:
    it asked for input, or a call on its path waits for an answer; ``failed``: its latest
    event is an error (a nested node run failing marks its workflow's path too);
    ``running``: anything else (started, not finished — or stopped by a crash).
    """
    answered = answered_ids(events, invocation_id)
    order: list[str] = []
    completed: set[str] = set()
    waiting: set[str] = set()
    last_error: dict[str, bool] = {}
    named: set[str] = set()  # paths some output event is the output of
    for event in events:
        if event.invocation_id != invocation_id:
            continue
        path = event.node_info.path
        if not path:
            continue
        for ancestor in _ancestors(path):
            if ancestor not in last_error:
                order.append(ancestor)
                last_error[ancestor] = False
        last_error[path] = bool(event.error_code)
        if event.actions.end_of_agent and event.content is None:
            completed.add(path)
        named.update(event.node_info.output_for or [])
        if path in (event.node_info.output_for or []):
            completed.add(path)
        if any(call.id not in answered for call in interrupt_calls(event)):
            waiting.add(path)
    for path in sorted(order, key=lambda p: -p.count("/")):  # a workflow after its nodes
        inside = [p for p in order if p.startswith(path + "/")]
        if path in named and all(p in completed for p in inside):
            completed.add(path)  # its output is named and none of its runs is unfinished
    statuses = []
    for path in order:
        if path in completed:
            status = "completed"
        elif path in waiting or any(w.startswith(path + "/") for w in waiting):
            status = "waiting"
        elif last_error[path]:
            status = "failed"
        else:
            status = "running"
        statuses.append(NodeStatus(path=path, name=NodeInfo(path=path).name, status=status))
    return statuses


def _ancestors(path: str) -> list[str]:
    """``a@1``, ``a@1/b@1``, ``a@1/b@1/c@2`` for ``a@1/b@1/c@2`` (the path itself last)."""
    segments = path.split("/")
    return ["/".join(segments[: i + 1]) for i in range(len(segments))]
