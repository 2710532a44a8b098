"""A LoopAgent that stops after max_iterations."""

from google.adk.agents import LlmAgent, LoopAgent
from google.adk.tools.tool_context import ToolContext


def count_round(tool_context: ToolContext) -> dict:
    """Counts one more round."""
    rounds = tool_context.state.get("rounds", 0) + 1
    tool_context.state["rounds"] = rounds
    return {"rounds": rounds}


counter = LlmAgent(
    name="counter",
    model="gemini-2.5-flash",
    instruction="Call count_round once, then say the round number.",
    tools=[count_round],
)

root_agent = LoopAgent(name="rounds", sub_agents=[counter], max_iterations=2)
