"""What one invocation's events say about each node of a workflow (for resuming it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from cairn.events.event import Event
from cairn.events.interrupts import starts_invocation
from cairn.events.request_input import REQUEST_INPUT_FUNCTION


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


@dataclasses.dataclass
class Replay:
    """Node runs of one workflow run, and the answers given to its input requests."""

    runs: dict[str, NodeRecord]
    answers: dict[str, Any]
    schemas: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Interrupt id -> the JSON schema its answer must match (if the request gave one)."""

    @classmethod
    def scan(cls, events: Sequence[Event], invocation_id: str, workflow_path: str) -> Replay:
        """Read only this invocation's events under ``workflow_path``.

        Every event of an invocation comes after the user message that started it, so the
        scan walks back from the newest event only as far as that message.
        """
        prefix = workflow_path + "/" if workflow_path else ""  # "": the root runs
        runs: dict[str, NodeRecord] = {}
        answers: dict[str, Any] = {}
        schemas: dict[str, Any] = {}
        mine: list[Event] = []
        for event in reversed(events):
            if event.invocation_id != invocation_id:
                continue
            mine.append(event)
            if starts_invocation(event):
                break
        for event in reversed(mine):
            has_content = event.content is not None
            if has_content:
                for response in event.get_function_responses():
                    if response.id:
                        answers[response.id] = response.response
            node_info = event.node_info
            path = node_info.path
            for target in node_info.output_for or ():
                child = _child(target, prefix)
                if child is None:
                    continue
                record = runs.get(child) or runs.setdefault(child, NodeRecord())
                record.outputs.append(event.output)
                if target == path:  # the node's own output event: it finished
                    record.completed = True
                    record.output = event.output
                    record.route = event.actions.route
                    record.escalated = record.escalated or bool(event.actions.escalate)
            if not path.startswith(prefix):
                continue
            child = path[len(prefix) :].split("/", 1)[0]
            record = runs.get(child) or runs.setdefault(child, NodeRecord())
            record.started = True
            if path != prefix + child:
                continue  # deeper: a nested workflow reads its own
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
            for call in event.get_function_calls() if has_content else ():
                if call.name != REQUEST_INPUT_FUNCTION and call.id and call.id in waiting_on:
                    record.calls.append(call.id)
                if call.name == REQUEST_INPUT_FUNCTION and call.id:
                    record.interrupts.append(call.id)
                    args = call.args or {}
                    schema = args.get("response_schema", args.get("responseSchema"))
                    if schema is not None:
                        schemas[call.id] = schema
        return cls(runs=runs, answers=answers, schemas=schemas)


def _child(target: str, prefix: str) -> str | None:
    """The direct child run ``target`` names under ``prefix``, or None."""
    if not target.startswith(prefix):
        return None
    rest = target[len(prefix) :]
    return None if "/" in rest or not rest else rest
