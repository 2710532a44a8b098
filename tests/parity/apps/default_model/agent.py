"""An agent that omits `model`: ADK's default model serves it (as most ADK 2.x apps do)."""

from google.adk.agents import Agent

root_agent = Agent(
    name="default_model_agent",
    instruction="Answer briefly.",
)
