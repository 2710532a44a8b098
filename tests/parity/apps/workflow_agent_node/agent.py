"""A Workflow with an LlmAgent node between two function nodes, run as the root agent."""

from google.adk.agents import LlmAgent
from google.adk.workflow import START, Workflow


def extract_question(node_input) -> str:
    text = node_input.parts[0].text if hasattr(node_input, "parts") else str(node_input)
    return text.removeprefix("Q: ")


answerer = LlmAgent(
    name="answerer",
    model="gemini-2.5-flash",
    instruction="Answer the question you are given in one word.",
    output_key="answer",
)


def grade(node_input) -> dict:
    return {"answer": str(node_input), "graded": True}


root_agent = Workflow(name="quiz", edges=[(START, extract_question, answerer, grade)])
