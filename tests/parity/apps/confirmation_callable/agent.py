"""require_confirmation as a callable of the tool's arguments: large transfers need a yes."""

from google.adk.agents import Agent
from google.adk.tools import FunctionTool


def transfer_money(amount: int, to: str) -> dict:
    """Sends money to someone."""
    return {"sent": amount, "to": to}


def needs_confirmation(amount: int, to: str) -> bool:
    return amount > 100


root_agent = Agent(
    name="bank_agent",
    model="gemini-2.5-flash",
    instruction="Move money as the user asks.",
    tools=[FunctionTool(transfer_money, require_confirmation=needs_confirmation)],
)
