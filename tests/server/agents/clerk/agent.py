"""A clerk whose refund tool needs a human's confirmation (the model acts the same anywhere)."""

import json
from typing import Any

from cairn import Agent, FunctionTool
from cairn.models.llm_request import LlmRequest
from cairn.testing import Call, ScriptedLlm


def refund(amount: int) -> dict[str, Any]:
    """Refund an amount to the customer."""
    return {"refunded": amount}


def respond(request: LlmRequest) -> Any:
    last = request.contents[-1]
    results = [p.function_response for p in last.parts or [] if p.function_response]
    if not results:
        return Call("refund", id="call-refund", amount=50)
    return "results: " + json.dumps({r.name: r.response for r in results}, sort_keys=True)


root_agent = Agent(
    name="clerk",
    model=ScriptedLlm(respond=respond),
    tools=[FunctionTool(refund, require_confirmation=True)],
)
