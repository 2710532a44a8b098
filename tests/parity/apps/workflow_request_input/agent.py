"""A node asks the user for input with RequestInput; the answer resumes the workflow."""

from google.adk.events import RequestInput
from google.adk.workflow import START, Workflow


def draft_reply(node_input) -> str:
    text = node_input.parts[0].text if hasattr(node_input, "parts") else str(node_input)
    return f"Dear customer, about '{text}': we are on it."


def ask_reviewer(node_input: str):
    yield RequestInput(
        interrupt_id="review",
        message="Approve this reply?",
        payload={"draft": node_input},
    )


def send_reply(node_input) -> str:
    return f"sent with answer {node_input}"


root_agent = Workflow(
    name="reply_review",
    edges=[(START, draft_reply, ask_reviewer, send_reply)],
)
