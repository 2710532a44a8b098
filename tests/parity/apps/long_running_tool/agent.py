"""A long-running tool: the run pauses; the client later sends the final FunctionResponse."""

from google.adk.agents import Agent
from google.adk.tools import LongRunningFunctionTool


def ask_for_approval(purpose: str, amount: float) -> dict:
    """Asks a manager to approve a reimbursement."""
    return {"status": "pending", "purpose": purpose, "amount": amount, "ticket": "T-1"}


root_agent = Agent(
    name="reimbursement_agent",
    model="gemini-2.5-flash",
    instruction="Reimbursements need a manager's approval via ask_for_approval.",
    tools=[LongRunningFunctionTool(func=ask_for_approval)],
)
