"""The weather agent from seed 1: a custom agent (no model needed) that uses all state scopes.

It answers "what's the weather in <city>" by calling a (fake, deterministic)
weather tool. The tool's result event carries one state delta that touches
every scope: ``app:weather_provider`` (whole app), ``user:temperature_unit``
(all of this user's sessions), ``last_city`` (this session) and
``temp:lookup_attempt`` (this invocation only).
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator

from google.genai import types

from cairn import BaseAgent, Context, Event, InvocationContext

_FORECAST = {"hangzhou": 23, "beijing": 12, "shanghai": 20}


def _text_of(content: types.Content | None) -> str:
    if content is None or not content.parts:
        return ""
    return "".join(part.text or "" for part in content.parts)


def _celsius_to(unit: str, celsius: int) -> str:
    return f"{celsius}°C" if unit == "C" else f"{round(celsius * 9 / 5 + 32)}°F"


class WeatherAgent(BaseAgent):
    """Looks up the weather for the city the user names (or the last one in this session)."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        text = _text_of(ctx.user_content).lower()
        step = Context(ctx)
        if "celsius" in text:
            step.state["user:temperature_unit"] = "C"
        elif "fahrenheit" in text:
            step.state["user:temperature_unit"] = "F"
        city = next((c for c in _FORECAST if re.search(rf"\b{c}\b", text)), None)
        city = city or step.state.get("last_city")
        if city is None:
            yield Event(
                content=types.Content(
                    role="model", parts=[types.Part(text="Which city do you mean?")]
                ),
                actions=step.actions,
            )
            return
        call = types.FunctionCall(id=f"call-{city}", name="get_weather", args={"city": city})
        yield Event(
            content=types.Content(role="model", parts=[types.Part(function_call=call)]),
            actions=step.actions,
        )

        # The tool runs with its own context; its writes ride on the function-response event.
        tool = Context(ctx, function_call_id=call.id)
        attempt = tool.state.get("temp:lookup_attempt", 0) + 1
        tool.state["temp:lookup_attempt"] = attempt
        tool.state["app:weather_provider"] = "provider-a"
        tool.state["last_city"] = city
        result = {"city": city, "celsius": _FORECAST[city], "attempt": attempt}
        response = types.FunctionResponse(id=call.id, name="get_weather", response=result)
        yield Event(
            content=types.Content(role="user", parts=[types.Part(function_response=response)]),
            actions=tool.actions,
        )

        unit = Context(ctx).state.get("user:temperature_unit", "F")
        answer = f"{city.title()}: {_celsius_to(unit, _FORECAST[city])}"
        yield Event(content=types.Content(role="model", parts=[types.Part(text=answer)]))


root_agent = WeatherAgent(name="weather_agent", description="Answers weather questions.")
