"""The functions the YAML workflow names."""

from google.adk.events import Event


def intake(node_input):
    return node_input.parts[0].text if hasattr(node_input, "parts") else str(node_input)


def price(node_input: str) -> int:
    return 10 * len(node_input.split())


def stock(node_input: str) -> int:
    return 3


def decide(node_input):
    route = "big" if node_input["price"] > 30 else "small"
    yield Event(route=route, output=node_input)


def ship(node_input) -> str:
    # A JoinNode's dict comes in arrival order (ADK: set order), so it is shown sorted.
    shown = sorted(node_input.items()) if isinstance(node_input, dict) else node_input
    return f"shipped {shown}"


def review(node_input) -> str:
    return f"reviewed {sorted(node_input.items())}"


def audit(node_input) -> str:
    return "audited"
