"""FunctionNode(func=...) built explicitly: the node is named after its function."""

from google.adk.workflow import START, FunctionNode, Workflow


def count_chars(node_input) -> int:
    text = node_input.parts[0].text if hasattr(node_input, "parts") else str(node_input)
    return len(text)


def describe(node_input: int) -> str:
    return "long" if node_input > 10 else "short"


count_node = FunctionNode(func=count_chars)
describe_node = FunctionNode(func=describe)

root_agent = Workflow(name="length_check", edges=[(START, count_node, describe_node)])
