"""A Workflow used as a node of another Workflow."""

from google.adk.workflow import START, Workflow


def normalize(node_input) -> str:
    text = node_input.parts[0].text if hasattr(node_input, "parts") else str(node_input)
    return text.strip().lower()


def reverse(node_input: str) -> str:
    return node_input[::-1]


inner = Workflow(name="transform", edges=[(START, normalize, reverse)])


def wrap(node_input: str) -> str:
    return f"<{node_input}>"


root_agent = Workflow(name="outer", edges=[(START, inner, wrap)])
