"""What each run of one workflow node did in an invocation, read from that invocation's events.

A run (``name@N`` at some path) has no "started" event: the log holds what it wrote (errors,
messages, its output). Its input is the output of the node that triggered it (the latest
run of a predecessor in the graph that finished before this run's first event), or its
workflow's input when it follows START; its start is when that input was recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cairn.agents.base_agent import BaseAgent
from cairn.events.event import Event
from cairn.server.errors import NotFoundError
from cairn.server.models import NodeError, NodeRun, RunStatus
from cairn.server.nodes import node_statuses
from cairn.workflow import AgentNode, Workflow
from cairn.workflow.nodes import START_NAME


class NodeRunNotFoundError(NotFoundError):
    """No run of the node asked for is in the invocation's events."""

    def __init__(self, *, invocation_id: str, node: str, known: Sequence[str]) -> None:
        self.invocation_id = invocation_id
        self.node = node
        listed = ", ".join(repr(p) for p in known[:20]) or "none"
        super().__init__(
            f"invocation {invocation_id!r} has no run of node {node!r}. Pass a run path "
            f"('wf@1/a@2') or a node path without the last run number ('wf@1/a'); "
            f"its runs: {listed}."
        )


def node_runs(
    events: Sequence[Event], invocation_id: str, node: str, root: BaseAgent
) -> list[NodeRun]:
    """The runs of ``node`` and every run nested in them, in order of first appearance.

    ``node`` is a run path (``wf@1/a@2``) or a node path whose last segment has no run
    number (``wf@1/a``: every run of ``a`` in ``wf@1``). ``events`` are the invocation's.
    """
    own = [e for e in events if e.invocation_id == invocation_id]
    statuses = {s.path: s.status for s in node_statuses(own, invocation_id)}
    every_run = "@" not in node.rsplit("/", 1)[-1]
    tops = [p for p in statuses if (p.rsplit("@", 1)[0] if every_run else p) == node]
    wanted = [p for p in statuses if p in tops or any(p.startswith(t + "/") for t in tops)]
    if not wanted:
        raise NodeRunNotFoundError(invocation_id=invocation_id, node=node, known=list(statuses))
    reader = _RunReader(own, root)
    return [reader.run(path, statuses[path]) for path in wanted]


class _RunReader:
    def __init__(self, events: list[Event], root: BaseAgent) -> None:
        self._events = events
        self._root = root

    def _at(self, path: str) -> list[tuple[int, Event]]:
        """The events of the run at ``path`` and of every run nested in it, with positions."""
        return [
            (i, e)
            for i, e in enumerate(self._events)
            if e.node_info.path == path or e.node_info.path.startswith(path + "/")
        ]

    def run(self, path: str, status: RunStatus) -> NodeRun:
        mine = self._at(path)
        first = mine[0][0]
        trigger = self._trigger(path, first)
        errors = [
            NodeError(
                code=e.error_code or "",
                message=e.error_message,
                timestamp=e.timestamp,
                event_id=e.id,
            )
            for _, e in mine
            if e.node_info.path == path and e.error_code
        ]
        output_event = next((e for _, e in mine if path in (e.node_info.output_for or [])), None)
        last_is_error = bool(mine[-1][1].error_code) and mine[-1][1].node_info.path == path
        started = trigger.timestamp if trigger is not None else mine[0][1].timestamp
        ended = mine[-1][1].timestamp if status in ("completed", "failed") else None
        return NodeRun(
            path=path,
            name=path.rsplit("/", 1)[-1].split("@", 1)[0],
            status=status,
            input=_input_of(trigger),
            input_known=trigger is not None,
            output=output_event.output if output_event is not None else None,
            attempts=len(errors) + (0 if last_is_error else 1),
            errors=errors,
            started_at=started,
            duration_seconds=None if ended is None else max(0.0, ended - started),
            event_ids=[e.id for _, e in mine],
        )

    def _trigger(self, path: str, before: int) -> Event | None:
        """The event whose output became the run's input (the user's message after START)."""
        parent, _, segment = path.rpartition("/")
        name = segment.split("@", 1)[0]
        if not parent:  # the root workflow's own run: the invocation's message
            return next((e for e in self._events[:before] if e.author == "user"), None)
        workflow = self._workflow_at(parent)
        if workflow is None or workflow.graph is None:
            return None
        sources = {
            edge.from_node.name for edge in workflow.graph.edges if edge.to_node.name == name
        }
        for event in reversed(self._events[:before]):
            for done in event.node_info.output_for or []:
                above, _, run = done.rpartition("/")
                if above == parent and run.split("@", 1)[0] in sources:
                    return event
        if START_NAME in sources:
            return self._trigger(parent, before)
        return None

    def _workflow_at(self, path: str) -> Workflow | None:
        """The workflow whose run is at ``path`` (the root, or one nested as a node)."""
        segments = [s.split("@", 1)[0] for s in path.split("/")]
        current: BaseAgent | None = self._root
        if not isinstance(current, Workflow) or current.name != segments[0]:
            return None
        for name in segments[1:]:
            graph: Any = current.graph if isinstance(current, Workflow) else None
            found = graph.nodes.get(name) if graph is not None else None
            current = found.agent if isinstance(found, AgentNode) else None
            if not isinstance(current, Workflow):
                return None
        return current if isinstance(current, Workflow) else None


def _input_of(trigger: Event | None) -> Any:
    if trigger is None:
        return None
    if trigger.author == "user" and trigger.content is not None:
        return "".join(p.text or "" for p in trigger.content.parts or []) or None
    return trigger.output
