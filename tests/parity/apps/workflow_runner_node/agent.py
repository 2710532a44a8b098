"""Runner(node=workflow): a Workflow whose nodes are a function and an LlmAgent."""

from google.adk.agents import LlmAgent
from google.adk.workflow import START, Workflow


def prepare(node_input) -> str:
    text = node_input.parts[0].text if hasattr(node_input, "parts") else str(node_input)
    return f"Topic: {text}"


headline_writer = LlmAgent(
    name="headline_writer",
    model="gemini-2.5-flash",
    instruction="Write a headline for the topic you are given.",
)


def publish(node_input) -> str:
    return f"published: {node_input}"


root_agent = Workflow(name="newsroom", edges=[(START, prepare, headline_writer, publish)])
