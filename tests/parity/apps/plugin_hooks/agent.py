"""A plugin before the agent's own callbacks: it answers in a tool's place, edits a result,
short-circuits a model call on a word, and writes state at each hook it sees."""

from typing import Any

from google.adk.agents import Agent
from google.adk.agents.callback_context import CallbackContext
from google.adk.apps import App
from google.adk.models import LlmRequest, LlmResponse
from google.adk.plugins import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types


def get_price(item: str) -> dict:
    """Returns the price of an item."""
    return {"price": {"tea": 3, "cake": 5}.get(item, 0)}


class Guard(BasePlugin):
    async def before_agent_callback(self, *, agent: Any, callback_context: CallbackContext):
        callback_context.state["order"] = ["plugin:before_agent"]
        return None

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        last = llm_request.contents[-1].parts[0].text or ""
        if "secret" in last:
            callback_context.state["blocked"] = True
            return LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text="Not allowed.")])
            )
        return None

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict | None:
        if tool_args.get("item") == "gold":
            tool_context.state["refused"] = "gold"
            return {"error": "gold is not for sale"}
        return None

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict,
    ) -> dict | None:
        if "price" in result:
            return {**result, "currency": "EUR"}
        return None


def own_before_agent(callback_context: CallbackContext) -> None:
    callback_context.state["order"] = [*callback_context.state.get("order", []), "agent"]


def own_after_tool(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: dict
) -> dict:
    return {**tool_response, "agent_saw": True}


root_agent = Agent(
    name="shop_agent",
    model="gemini-2.5-flash",
    instruction="Answer price questions with get_price.",
    tools=[get_price],
    before_agent_callback=own_before_agent,
    after_tool_callback=own_after_tool,
)

app = App(name="plugin_hooks", root_agent=root_agent, plugins=[Guard(name="guard")])
