"""A weather agent on a scripted model, so that its eval set runs with no API key.

The model is a rule: a question about a city's weather calls ``get_weather``; a message
naming a unit calls ``set_temperature_unit``; a tool result becomes one sentence. Give
``build_agent`` a real model name (``build_agent("gemini-2.5-flash")``) to evaluate the real
thing: the eval set and the criteria stay the same.
"""

from __future__ import annotations

import re
from typing import Any

from cairn import Agent, ToolContext
from cairn.models import BaseLlm
from cairn.models.llm_request import LlmRequest
from cairn.testing import Call, ScriptedLlm

_FORECAST = {"hangzhou": 23, "beijing": 12, "lisbon": 19}


def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """Today's temperature in a city, in the user's preferred unit.

    Args:
        city: the city, e.g. "Hangzhou".
    """
    key = city.strip().lower()
    if key not in _FORECAST:
        return {"error": f"no forecast for {city}"}
    unit = tool_context.state.get("user:temperature_unit", "C")
    celsius = _FORECAST[key]
    return {
        "city": key,
        "temperature": celsius if unit == "C" else round(celsius * 1.8 + 32),
        "unit": unit,
    }


def set_temperature_unit(unit: str, tool_context: ToolContext) -> dict[str, str]:
    """Remember the user's preferred unit: "C" or "F".

    Args:
        unit: "C" for Celsius or "F" for Fahrenheit.
    """
    tool_context.state["user:temperature_unit"] = unit
    return {"unit": unit}


def _reply(request: LlmRequest) -> Any:
    last = request.contents[-1]
    for part in last.parts or []:
        if part.function_response is not None:
            result = part.function_response.response or {}
            if "error" in result:
                return f"Sorry, {result['error']}."
            if part.function_response.name == "set_temperature_unit":
                return f"Noted: °{result['unit']} from now on."
            return f"It is {result['temperature']}°{result['unit']} in {result['city'].title()}."
    text = " ".join(part.text or "" for part in last.parts or []).lower()
    unit = re.search(r"\b(celsius|fahrenheit)\b", text)
    if unit:
        return Call("set_temperature_unit", unit=unit.group(1)[0].upper())
    city = re.search(r"weather in ([a-z ]+?)[?.!]*$", text)
    if city:
        return Call("get_weather", city=city.group(1).strip().title())
    return "Ask me about the weather in a city."


def build_agent(model: str | BaseLlm) -> Agent:
    return Agent(
        name="weather_agent",
        model=model,
        instruction="You answer weather questions; call get_weather for a city's weather.",
        tools=[get_weather, set_temperature_unit],
    )


root_agent = build_agent(ScriptedLlm(respond=_reply))
