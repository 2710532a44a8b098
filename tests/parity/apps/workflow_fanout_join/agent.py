"""Fan-out to two function nodes, joined by a JoinNode that gets both outputs."""

from google.adk.workflow import START, JoinNode, Workflow


def split_text(node_input) -> str:
    return node_input.parts[0].text if hasattr(node_input, "parts") else str(node_input)


def count_words(node_input: str) -> int:
    return len(node_input.split())


def count_letters(node_input: str) -> int:
    return sum(character.isalpha() for character in node_input)


join = JoinNode(name="join_counts")


def report(node_input: dict) -> str:
    return f"{node_input['count_words']} words, {node_input['count_letters']} letters"


root_agent = Workflow(
    name="text_stats",
    edges=[(START, split_text, (count_words, count_letters), join, report)],
)
