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
    failures: int = 0


@dataclasses.dataclass
class Replay:
    """Node runs of one workflow run, and the answers given to its input requests."""

    runs: dict[str, NodeRecord]
    answers: dict[str, Any]
    schemas: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Interrupt id -> the JSON schema its answer must match (if the request gave one)."""

    @classmethod
    def scan(
        cls, events: Sequence[Event], invocation_id: str, workflow_path: str, author: str
    ) -> Replay:
        """Read only this invocation's events under ``workflow_path``; a node run is
        completed by an end-of-agent event of ``author`` (the workflow), not by the end
        marker of an agent running in the node.

        Every event of an invocation comes after the user message that started it, so the
        scan walks back from the newest event only as far as that message.
        """
        prefix = workflow_path + "/"
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
            for response in event.get_function_responses():
                if response.id:
                    answers[response.id] = response.response
            path = event.node_info.path
            if not path.startswith(prefix):
                continue
            child = path[len(prefix) :]
            if "/" in child:
                continue  # deeper: a nested workflow reads its own
            record = runs.setdefault(child, NodeRecord())
            record.started = True
            if event.actions.escalate:
                record.escalated = True
            if event.actions.end_of_agent and event.author == author:
                record.completed = True
                record.output = event.output
                record.route = event.actions.route
            elif event.error_code:
                record.failures += 1
            for call in event.get_function_calls():
                if call.name == REQUEST_INPUT_FUNCTION and call.id:
                    record.interrupts.append(call.id)
                    if call.args and call.args.get("responseSchema") is not None:
                        schemas[call.id] = call.args["responseSchema"]
        return cls(runs=runs, answers=answers, schemas=schemas)
