"""A workflow that asks for a structured answer: the web UI builds its form from the schema."""

from __future__ import annotations

from typing import Any

from cairn.workflow import START, RequestInput, Workflow

TICKET_SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "One line"},
        "priority": {"enum": ["low", "normal", "urgent"]},
        "hours": {"type": "integer", "minimum": 0},
        "billable": {"type": "boolean"},
    },
    "required": ["title", "priority", "hours"],
}


def ask_for_ticket(node_input: str):  # type: ignore[no-untyped-def]
    yield RequestInput(
        message=f"Describe the ticket for: {node_input}",
        response_schema=TICKET_SCHEMA,
    )


def file_ticket(node_input: dict[str, Any]) -> str:
    billable = "billable" if node_input.get("billable") else "not billable"
    return (
        f"Filed {node_input['title']!r} ({node_input['priority']}, "
        f"{node_input['hours']} h, {billable})"
    )


root_agent = Workflow(name="intake", edges=[(START, ask_for_ticket, file_ticket)])
