"""An App wrapping the root agent, as ADK 2.x apps are packaged."""

from google.adk.agents import Agent
from google.adk.apps import App


def roll_die(sides: int) -> int:
    """Rolls a die with the given number of sides."""
    return min(4, sides)


root_agent = Agent(
    name="dice_agent",
    model="gemini-2.5-flash",
    instruction="Roll dice when asked.",
    tools=[roll_die],
)

app = App(name="dice_app", root_agent=root_agent)
