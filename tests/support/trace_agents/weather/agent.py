"""A weather agent for the trace tests: it calls get_weather, then get_forecast (which
raises), then answers; each model call reports its tokens (10, 20, 30 in; 2, 4, 6 out)."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn import Agent, LlmResponse
from cairn.models.llm_request import LlmRequest
from cairn.testing import Call, ScriptedLlm


def get_weather(city: str) -> dict[str, Any]:
    """Look up the weather."""
    return {"city": city, "celsius": 23}


def get_forecast(city: str) -> dict[str, Any]:
    """Look up tomorrow's weather."""
    raise RuntimeError(f"the forecast service for {city} is down")


def respond(request: LlmRequest) -> LlmResponse:
    last = request.contents[-1]
    answered = [p.function_response.name for p in last.parts or [] if p.function_response]
    if answered == ["get_weather"]:
        part, step = Call("get_forecast", city="Hangzhou").part(), 2
    elif answered == ["get_forecast"]:
        part, step = types.Part(text="It is 23°C in Hangzhou."), 3
    else:
        part, step = Call("get_weather", city="Hangzhou").part(), 1
    return LlmResponse(
        content=types.Content(role="model", parts=[part]),
        finish_reason=types.FinishReason.STOP,
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=10 * step, candidates_token_count=2 * step
        ),
        turn_complete=True,
    )


root_agent = Agent(
    name="weather",
    model=ScriptedLlm(respond=respond),
    instruction="Answer in one sentence.",
    tools=[get_weather, get_forecast],
)
