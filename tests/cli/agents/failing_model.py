"""An agent whose model fails as the message asks: "outage" is a provider's refusal (a
``ModelCallError``), "bug" an exception from the adapter's own code; else it answers "ok"."""

from __future__ import annotations

from cairn import Agent
from cairn.models.errors import ModelCallError
from cairn.models.llm_request import LlmRequest
from cairn.testing import ScriptedLlm


def respond(request: LlmRequest) -> object:
    last = (request.contents[-1].parts or []) if request.contents else []
    text = last[0].text if last else ""
    if text == "outage":
        return ModelCallError(
            provider="acme",
            model="acme-1",
            status_code=503,
            provider_message="the model is overloaded",
            retryable=True,
        )
    if text == "bug":
        return KeyError("choices")
    return "ok"


root_agent = Agent(name="helper", model=ScriptedLlm(respond=respond))
