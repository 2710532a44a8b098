"""Seed 2's review workflow: draft an email, ask a human to review it, then send, discard, or
revise (the feedback goes into state and the draft is written again).

Drafting uses an LLM agent when ``CAIRN_MODEL`` names a model (with that provider's key
set), and a template otherwise, so it runs with no API key.
"""

from __future__ import annotations

import os
from typing import Any

from cairn import Agent, Context, Event
from cairn.workflow import START, RequestInput, Workflow


def draft_from_template(node_input: Any, ctx: Context) -> str:
    """Write (or rewrite) the email from the request and any reviewer feedback."""
    if ctx.node_path.endswith("@1"):  # the first draft of a request: start afresh
        ctx.state["request"], ctx.state["feedback"] = str(node_input), None
    request = ctx.state["request"]
    feedback = ctx.state.get("feedback")
    body = f"Hello team,\n\n{request}."
    if feedback:
        body += f"\n\n(Revised: {feedback}.)"
    draft = f"{body}\n\nBest regards,\nAda"
    ctx.state["draft"] = draft
    return draft


def request_review(node_input: str):  # type: ignore[no-untyped-def]
    """Pause until a human answers: 'approve', 'reject', or feedback for a new draft."""
    yield RequestInput(
        message="Please review the draft: answer 'approve', 'reject', or your feedback.",
        payload={"draft": node_input},
        response_schema={"type": "string", "minLength": 1},
    )


def handle_review(node_input: str):  # type: ignore[no-untyped-def]
    answer = node_input.strip()
    if answer.lower() == "approve":
        yield Event(route="approved", output=answer)
    elif answer.lower() == "reject":
        yield Event(route="rejected", output=answer)
    else:
        yield Event(route="revise", state={"feedback": answer}, output=answer)


def send_email(ctx: Context) -> str:
    return f"SENT:\n{ctx.state['draft']}"


def discard(ctx: Context) -> str:
    return "The draft was discarded."


def build_workflow(model: str | None = None) -> Workflow:
    drafter: Any = draft_from_template
    if model:
        drafter = Agent(
            name="draft_email",
            model=model,
            instruction=(
                "Write a short, friendly email for this request: {request?}. "
                "Apply the reviewer's feedback if any: {feedback?}. Reply with the email only."
            ),
            output_key="draft",
        )
    return Workflow(
        name="email_review",
        edges=[
            (START, drafter, request_review, handle_review),
            (handle_review, {"approved": send_email, "rejected": discard, "revise": drafter}),
        ],
    )


root_agent = build_workflow(os.environ.get("CAIRN_MODEL"))
