"""Seed 2's review workflow: draft an email, ask a human to review it, then send, discard, or
revise (the draft is written again with the reviewer's feedback).

Each review approves exactly the draft it showed: the draft travels from node to node as
output and in the review request's payload, never through session state. Two requests in
one session (a second message while a review waits) are two invocations, each with its own
draft, and answering either review resumes only its own.

Drafting uses an LLM agent when ``CAIRN_MODEL`` names a model (with that provider's key
set), and a template otherwise, so it runs with no API key.
"""

from __future__ import annotations

import os
from typing import Any

from cairn import Agent, Context, Event
from cairn.models import BaseLlm
from cairn.workflow import START, RequestInput, Workflow, node


def draft_from_template(node_input: str | dict[str, str]) -> str:
    """Write the email for a request (text), or rewrite it: ``{"request", "feedback", ...}``."""
    if isinstance(node_input, dict):
        request, feedback = node_input["request"], node_input.get("feedback")
    else:
        request, feedback = node_input, None
    body = f"Hello team,\n\n{request}."
    if feedback:
        body += f"\n\n(Revised: {feedback}.)"
    return f"{body}\n\nBest regards,\nAda"


@node(rerun_on_resume=True)
def request_review(node_input: str, ctx: Context):  # type: ignore[no-untyped-def]
    """Pause until a human answers 'approve', 'reject', or feedback; then output the answer
    together with the draft it is about (runs again on resume, with the same input)."""
    if not ctx.resume_inputs:
        yield RequestInput(
            message="Please review the draft: answer 'approve', 'reject', or your feedback.",
            payload={"draft": node_input},
            response_schema={"type": "string", "minLength": 1},
        )
        return
    [answer] = ctx.resume_inputs.values()
    yield {"draft": node_input, "answer": answer}  # the node's output


def handle_review(node_input: dict[str, str], ctx: Context):  # type: ignore[no-untyped-def]
    """Route on the answer; the reviewed draft goes on to be sent, or back to be revised."""
    draft, answer = node_input["draft"], node_input["answer"].strip()
    if answer.lower() == "approve":
        yield Event(route="approved", output=draft)
    elif answer.lower() == "reject":
        yield Event(route="rejected", output=draft)
    else:
        revision = {"request": request_of(ctx), "draft": draft, "feedback": answer}
        yield Event(route="revise", output=revision)


def request_of(ctx: Context) -> str:
    """The request this run is about: the text of the message that started its invocation."""
    content = ctx.user_content
    return "".join(part.text or "" for part in (content.parts or [] if content else []))


def send_email(node_input: str) -> str:
    return f"SENT:\n{node_input}"


def discard(node_input: str) -> str:
    return "The draft was discarded."


def build_workflow(model: str | BaseLlm | None = None) -> Workflow:
    """The workflow; drafting by an LLM agent on ``model`` (a name or a model), else the
    template."""
    drafter: Any = draft_from_template
    if model:
        drafter = Agent(
            name="draft_email",
            model=model,
            instruction=(
                "Write a short, friendly email for the request you are given. When you are "
                "given JSON with a request, your earlier draft and a reviewer's feedback, "
                "rewrite the draft applying the feedback. Reply with the email only."
            ),
        )
    return Workflow(
        name="email_review",
        edges=[
            (START, drafter, request_review, handle_review),
            (handle_review, {"approved": send_email, "rejected": discard, "revise": drafter}),
        ],
    )


root_agent = build_workflow(os.environ.get("CAIRN_MODEL"))
