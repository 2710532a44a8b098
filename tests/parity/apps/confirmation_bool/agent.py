"""A tool that always needs the user's confirmation (require_confirmation=True)."""

from google.adk.agents import Agent
from google.adk.tools import FunctionTool


def delete_file(path: str) -> dict:
    """Deletes a file."""
    return {"deleted": path}


root_agent = Agent(
    name="file_agent",
    model="gemini-2.5-flash",
    instruction="Manage the user's files.",
    tools=[FunctionTool(delete_file, require_confirmation=True)],
)
