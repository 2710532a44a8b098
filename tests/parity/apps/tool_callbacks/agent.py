"""before_tool_callback answers in the tool's place; after_tool_callback edits a result."""

from typing import Any

from google.adk.agents import Agent
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext


def get_capital(country: str) -> dict:
    """Returns the capital city of a country."""
    capitals = {"france": "Paris", "japan": "Tokyo"}
    return {"capital": capitals.get(country.lower(), "unknown")}


def before_tool(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> dict | None:
    if args.get("country", "").lower() == "atlantis":
        tool_context.state["myth_asked"] = True
        return {"capital": "a myth has no capital"}
    return None


def after_tool(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: dict
) -> dict | None:
    if tool.name == "get_capital":
        return {**tool_response, "checked": True}
    return None


root_agent = Agent(
    name="geo_agent",
    model="gemini-2.5-flash",
    instruction="Answer questions about capitals with get_capital.",
    tools=[get_capital],
    before_tool_callback=before_tool,
    after_tool_callback=after_tool,
)
