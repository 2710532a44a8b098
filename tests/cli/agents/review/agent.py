"""A workflow that drafts a note and waits for a verdict matching a JSON schema."""

from __future__ import annotations

from typing import Any

from scripted import ran

from cairn.workflow import START, RequestInput, Workflow

VERDICT = {
    "type": "object",
    "properties": {"verdict": {"enum": ["send", "hold"]}, "note": {"type": "string"}},
    "required": ["verdict"],
}


def draft(node_input: str) -> str:
    ran("draft")
    return f"draft of {node_input}"


def review(node_input: str):  # type: ignore[no-untyped-def]
    ran("review")
    yield RequestInput(
        interrupt_id="review-1",
        message="Send this draft?",
        payload=node_input,
        response_schema=VERDICT,
    )


def send(node_input: Any) -> str:
    ran("send")
    return f"{node_input['verdict']}: {node_input.get('note', '')}"


root_agent = Workflow(name="review", edges=[(START, draft, review, send)])
