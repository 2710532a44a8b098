"""A Workflow that routes with a dict of edges on the route a node picks."""

from google.adk.events import Event
from google.adk.workflow import START, Workflow


def classify(node_input):
    text = node_input.parts[0].text if hasattr(node_input, "parts") else str(node_input)
    route = "refund" if "refund" in text.lower() else "question"
    yield Event(route=route, output=text)


def handle_refund(node_input: str) -> str:
    return f"Refund opened for: {node_input}"


def handle_question(node_input: str) -> str:
    return f"Question noted: {node_input}"


root_agent = Workflow(
    name="triage",
    edges=[
        (START, classify),
        (classify, {"refund": handle_refund, "question": handle_question}),
    ],
)
