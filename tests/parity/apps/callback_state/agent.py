"""State written by a before_agent_callback is visible at once to the agent's tools."""

from google.adk.agents import Agent
from google.adk.agents.callback_context import CallbackContext
from google.adk.tools.tool_context import ToolContext


def load_profile(callback_context: CallbackContext) -> None:
    callback_context.state["tier"] = "gold"
    callback_context.state["greeted"] = callback_context.state.get("greeted", 0) + 1


def discount(tool_context: ToolContext) -> dict:
    """Returns the user's discount."""
    tier = tool_context.state.get("tier")
    return {"tier": tier, "discount": 20 if tier == "gold" else 0}


root_agent = Agent(
    name="loyalty_agent",
    model="gemini-2.5-flash",
    instruction="Tell the user their discount. Their tier: {tier}",
    tools=[discount],
    before_agent_callback=load_profile,
)
