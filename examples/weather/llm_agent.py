"""Seed 1's weather agent as an LLM agent: a model that calls a ``get_weather`` tool.

``root_agent`` uses the model named by the ``CAIRN_MODEL`` environment variable
(default ``gemini-2.5-flash``; also ``openai/<model>`` or ``anthropic/<model>``
with the provider's key in its usual variable). ``build_agent(model)`` takes any
model string or ``BaseLlm`` — the tests pass a ``cairn.testing.ScriptedLlm``.
"""

from __future__ import annotations

import os
from typing import Any

from cairn import Agent, ToolContext
from cairn.models import BaseLlm

_FORECAST = {"hangzhou": 23, "beijing": 12, "shanghai": 20, "lisbon": 19}


def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """Get today's temperature in a city, in the user's preferred unit.

    Args:
        city: the city, e.g. "Hangzhou".
    """
    attempt = tool_context.state.get("temp:lookup_attempt", 0) + 1
    tool_context.state["temp:lookup_attempt"] = attempt
    tool_context.state["app:weather_provider"] = "provider-a"
    key = city.strip().lower()
    if key not in _FORECAST:
        return {"error": f"no forecast for {city!r}; known cities: {', '.join(_FORECAST)}"}
    tool_context.state["last_city"] = key
    celsius = _FORECAST[key]
    unit = tool_context.state.get("user:temperature_unit", "C")
    value = celsius if unit == "C" else round(celsius * 9 / 5 + 32)
    return {"city": key, "temperature": value, "unit": unit}


def set_temperature_unit(unit: str, tool_context: ToolContext) -> dict[str, str]:
    """Remember the user's preferred temperature unit for all their conversations.

    Args:
        unit: "C" for Celsius or "F" for Fahrenheit.
    """
    unit = unit.strip().upper()[:1]
    if unit not in ("C", "F"):
        return {"error": "unit must be 'C' or 'F'"}
    tool_context.state["user:temperature_unit"] = unit
    return {"unit": unit}


INSTRUCTION = """You answer weather questions.
Preferred unit: {user:temperature_unit?} (Celsius when empty). Last city asked: {last_city?}.
When the user states a unit preference, call set_temperature_unit first.
When the user asks about the weather, call get_weather; if no city is named, use the last city.
"""


def build_agent(model: str | BaseLlm) -> Agent:
    return Agent(
        name="weather_agent",
        description="Answers weather questions.",
        model=model,
        instruction=INSTRUCTION,
        tools=[get_weather, set_temperature_unit],
    )


root_agent = build_agent(os.environ.get("CAIRN_MODEL", "gemini-2.5-flash"))
