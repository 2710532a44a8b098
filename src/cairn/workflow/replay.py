"""What one invocation's events say about each node of a workflow (for resuming it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cairn.events.event import Event
from cairn.events.invocation_log import InvocationLog
from cairn.events.request_input import REQUEST_INPUT_FUNCTION

if TYPE_CHECKING:
    from cairn.agents.invocation_context import InvocationContext


@dataclasses.dataclass
class NodeRecord:
    """One node run (``name@run``) as the log recorded it."""

    started: bool = False
    """Some event of this run is in the log (an agent node's input, say)."""
    completed: bool = False
    escalated: bool = False
    output: Any = None
    route: Any = None
    interrupts: list[str] = dataclasses.field(default_factory=list)
    calls: list[str] = dataclasses.field(default_factory=list)
    """Ids of other long-running calls the node's own events made (a node of the app's own
    class pausing on a function call of its choosing)."""
    failures: int = 0
    outputs: list[Any] = dataclasses.field(default_factory=list)
    """Outputs of events naming this run in ``node_info.output_for`` (a nested workflow's
    terminal nodes), in log order."""


class Replay:
    """Node runs of one workflow run (the children of ``workflow_path``) and the answers
    given to its input requests, as the invocation's log stood when it was made.

    Records are read from the invocation's indexed log (``InvocationLog``) when first
    asked for, so a lookup costs what that run wrote.
    """

    def __init__(self, log: InvocationLog, workflow_path: str) -> None:
        self._log = log
        self._prefix = workflow_path + "/" if workflow_path else ""  # "": the root runs
        self._before = len(log.events)
        self._runs: dict[str, NodeRecord | None] = {}
        self.answers: dict[str, Any] = log.answers(self._before)
        self.schemas: dict[str, Any] = log.schemas
        """Interrupt id -> the JSON schema its answer must match (if the request gave one)."""

    @classmethod
    def of(cls, ctx: InvocationContext, workflow_path: str) -> Replay:
        """The runs under ``workflow_path`` in ``ctx``'s invocation, as the log is now."""
        return cls(ctx.invocation_log(), workflow_path)

    @classmethod
    def scan(cls, events: Sequence[Event], invocation_id: str, workflow_path: str) -> Replay:
        """The runs under ``workflow_path`` in invocation ``invocation_id`` of ``events``."""
        return cls(InvocationLog(invocation_id).update(events), workflow_path)

    def run(self, name: str) -> NodeRecord | None:
        """What the log recorded of the run ``name`` (``node@n``); None if nothing."""
        if name not in self._runs:
            self._runs[name] = self._read(self._prefix + name)
        return self._runs[name]

    def _read(self, path: str) -> NodeRecord | None:
        before = self._before
        entries = self._log.at(path, before)
        started = self._log.started(path, before)
        if not started and not entries:
            return None
        record = NodeRecord(started=started)
        for event, own in entries:
            if not own:  # the event names this run in output_for
                record.outputs.append(event.output)
                if event.node_info.path == path:  # the node's own output event: it finished
                    record.completed = True
                    record.output = event.output
                    record.route = event.actions.route
                    record.escalated = record.escalated or bool(event.actions.escalate)
                continue
            if event.actions.escalate:
                record.escalated = True
            if event.actions.end_of_agent and event.content is None:
                # A nested workflow's end marker: its output is that of its terminal nodes
                # (or, for a loop that escalated, the marker's own).
                record.completed = True
                if event.output is not None:
                    record.output = event.output
                else:
                    outputs = record.outputs
                    record.output = outputs[0] if len(outputs) == 1 else outputs or None
            elif event.error_code:
                record.failures += 1
            waiting_on = event.long_running_tool_ids or set()
            if waiting_on and event.actions.route is not None and not record.completed:
                record.route = event.actions.route  # picked before the node paused
            for call in event.get_function_calls() if event.content is not None else ():
                if call.name != REQUEST_INPUT_FUNCTION and call.id and call.id in waiting_on:
                    record.calls.append(call.id)
                if call.name == REQUEST_INPUT_FUNCTION and call.id:
                    record.interrupts.append(call.id)
        return record
