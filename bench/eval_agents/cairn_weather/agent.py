"""bench/eval_throughput.py's agent for cairn: one tool, a zero-latency rule model.

The same behaviour as ../adk_weather/agent.py, line for line: the model's reply depends only
on the request's last content. A user's "What is the weather in X?" becomes a call of
get_weather(city="X"); get_weather's response becomes "It is N°C in X.". Each turn is two
model calls and one tool call.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from google.genai import types

from cairn import Agent
from cairn.models import BaseLlm
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse

QUESTION = "What is the weather in "


def get_weather(city: str) -> dict[str, Any]:
    """Today's temperature in a city, in degrees Celsius.

    Args:
        city: the city, e.g. "Lisbon".
    """
    return {"city": city, "celsius": 10 + len(city)}


def reply(last: types.Content) -> types.Content:
    """The model's answer to a request whose last content is ``last``."""
    for part in last.parts or []:
        answer = part.function_response
        if answer is not None:
            result = answer.response or {}
            text = f"It is {result['celsius']}°C in {result['city']}."
            return types.Content(role="model", parts=[types.Part(text=text)])
    said = "".join(part.text or "" for part in last.parts or [])
    city = said.removeprefix(QUESTION).rstrip("?")
    call = types.FunctionCall(name="get_weather", args={"city": city})
    return types.Content(role="model", parts=[types.Part(function_call=call)])


class RuleLlm(BaseLlm):
    """Answers at once, from the request alone (no provider, no latency)."""

    model: str = "rule"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse(content=reply(llm_request.contents[-1]))


root_agent = Agent(
    name="weather_agent",
    model=RuleLlm(),
    instruction="You answer weather questions; call get_weather for a city's weather.",
    tools=[get_weather],
)
