"""Tools that save an artifact and load it back through the tool context."""

from google.adk.agents import Agent
from google.adk.tools.tool_context import ToolContext
from google.genai import types


async def save_note(title: str, body: str, tool_context: ToolContext) -> dict:
    """Saves a note as an artifact."""
    version = await tool_context.save_artifact(f"{title}.txt", types.Part(text=body))
    return {"saved": f"{title}.txt", "version": version}


async def read_note(title: str, tool_context: ToolContext) -> dict:
    """Reads a saved note."""
    part = await tool_context.load_artifact(f"{title}.txt")
    return {"body": part.text if part else None}


root_agent = Agent(
    name="notes_agent",
    model="gemini-2.5-flash",
    instruction="Save and read notes.",
    tools=[save_note, read_note],
)
