"""An LlmAgent with ADK's PlanReActPlanner and a tool."""

from google.adk.agents import Agent
from google.adk.planners import PlanReActPlanner


def add(a: int, b: int) -> dict:
    """Adds two numbers."""
    return {"sum": a + b}


root_agent = Agent(
    name="solver",
    model="gemini-2.5-flash",
    instruction="You solve sums with the add tool.",
    planner=PlanReActPlanner(),
    tools=[add],
    output_key="answer",
)
