"""A scripted forecaster for the dev server's eval tests: it looks the city up with a tool,
then answers. A ``city.txt`` beside this file makes it look up that city instead (a test's
way to change its behaviour between the recorded run and the eval run); a ``sky.txt`` changes
what its tool reports (the live world changing under a recorded case)."""

from __future__ import annotations

from pathlib import Path

from cairn import Agent
from cairn.models.llm_request import LlmRequest
from cairn.testing import Call, ScriptedLlm

_OVERRIDE = Path(__file__).resolve().parent / "city.txt"
_SKY = Path(__file__).resolve().parent / "sky.txt"


def weather(city: str) -> dict[str, str]:
    """The sky over a city."""
    return {"city": city, "sky": _SKY.read_text().strip() if _SKY.exists() else "sunny"}


def reply(request: LlmRequest) -> Call | str:
    last = request.contents[-1].parts[-1]
    if last.function_response is not None:
        answer = last.function_response.response or {}
        return f"It is {answer.get('sky')} in {answer.get('city')}."
    words = (last.text or "").rstrip("?").split()
    city = _OVERRIDE.read_text().strip() if _OVERRIDE.exists() else words[-1]
    return Call("weather", city=city)


root_agent = Agent(
    name="forecast", model=ScriptedLlm(respond=reply), instruction="Be brief.", tools=[weather]
)
