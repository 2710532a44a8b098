"""A help-desk agent whose calls pause in different ways: a payment to confirm, a manager's
long-running approval, and a weather service that needs an API key."""

from __future__ import annotations

import json
from typing import Any

from cairn import Agent, FunctionTool, LongRunningFunctionTool, ToolContext
from cairn.auth import APIKey, APIKeyIn, AuthConfig
from cairn.models.llm_request import LlmRequest
from cairn.testing import Call, ScriptedLlm

WEATHER_AUTH = AuthConfig(auth_scheme=APIKey(in_=APIKeyIn.header, name="X-Api-Key"))


def pay(amount: int, to: str) -> dict[str, Any]:
    """Pay someone."""
    return {"paid": amount, "to": to}


def ask_manager(request: str) -> None:
    """Ask the manager; the answer comes later (a long-running approval)."""
    return None


async def weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """The weather in a city (the service needs an API key)."""
    credential = tool_context.get_auth_response(WEATHER_AUTH) or await tool_context.load_credential(
        WEATHER_AUTH
    )
    if credential is None or not credential.api_key:
        tool_context.request_credential(WEATHER_AUTH)
        return {"status": "waiting for an API key"}
    return {"city": city, "sky": "clear", "key_ends": credential.api_key[-3:]}


def respond(request: LlmRequest) -> Any:
    last = request.contents[-1]
    results = [p.function_response for p in last.parts or [] if p.function_response]
    if results:
        return "results: " + json.dumps({r.name: r.response for r in results}, sort_keys=True)
    text = "".join(p.text or "" for p in last.parts or []).strip()
    calls = {
        "pay": Call("pay", amount=40, to="Ann"),
        "manager": Call("ask_manager", request=f"approve: {text}"),
        "weather": Call("weather", city="Oslo"),
    }
    wanted = [call for word, call in calls.items() if word in text]
    return wanted or f"Say pay, manager or weather (got {text!r})."


root_agent = Agent(
    name="desk",
    model=ScriptedLlm(respond=respond),
    tools=[
        FunctionTool(pay, require_confirmation=True),
        LongRunningFunctionTool(ask_manager),
        weather,
    ],
)
