"""The email-review workflow in small: draft, ask a human, then send or revise."""

from cairn import Context, Event
from cairn.workflow import START, RequestInput, Workflow


def draft(node_input: str, ctx: Context) -> str:
    feedback = ctx.state.get("feedback")
    text = f"Hello team, {node_input}" if not feedback else f"Hello team ({feedback})"
    ctx.state["draft"] = text
    return text


def review(node_input: str):  # type: ignore[no-untyped-def]
    yield RequestInput(
        message="Approve the draft, or give feedback.",
        payload={"draft": node_input},
        response_schema={"type": "string", "minLength": 1},
    )


def decide(node_input: str):  # type: ignore[no-untyped-def]
    if node_input == "approve":
        yield Event(route="approved", output=node_input)
    else:
        yield Event(route="revise", state={"feedback": node_input}, output=node_input)


def send(ctx: Context) -> str:
    return f"SENT: {ctx.state['draft']}"


root_agent = Workflow(
    name="review",
    edges=[
        (START, draft, review, decide),
        (decide, {"approved": send, "revise": draft}),
    ],
)
