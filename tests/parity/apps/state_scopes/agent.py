"""State scopes: user: and app: keys outlive the session, temp: keys the invocation."""

from google.adk.agents import Agent
from google.adk.tools.tool_context import ToolContext


def remember(preference: str, tool_context: ToolContext) -> dict:
    """Remembers the user's preference."""
    tool_context.state["user:preference"] = preference
    tool_context.state["app:visits"] = tool_context.state.get("app:visits", 0) + 1
    tool_context.state["temp:scratch"] = "only this turn"
    tool_context.state["session_note"] = "noted"
    return {"saw_temp": tool_context.state.get("temp:scratch")}


def recall(tool_context: ToolContext) -> dict:
    """Recalls what is known about the user."""
    return {
        "preference": tool_context.state.get("user:preference"),
        "visits": tool_context.state.get("app:visits"),
        "temp": tool_context.state.get("temp:scratch"),
        "session_note": tool_context.state.get("session_note"),
    }


root_agent = Agent(
    name="memory_agent",
    model="gemini-2.5-flash",
    instruction="Remember and recall preferences. Known preference: {user:preference?}",
    tools=[remember, recall],
)
