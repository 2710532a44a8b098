"""An instruction provider: a function of the ReadonlyContext, read each turn."""

from google.adk.agents import Agent
from google.adk.agents.readonly_context import ReadonlyContext


def greeting_instruction(context: ReadonlyContext) -> str:
    name = context.state.get("user_name", "friend")
    # A provider's text is used as is: {braces} are not filled from state.
    return f"Greet {name} by name. Keep {{braces}} literally."


root_agent = Agent(
    name="greeter",
    model="gemini-2.5-flash",
    instruction=greeting_instruction,
)
