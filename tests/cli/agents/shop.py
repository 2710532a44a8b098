"""A clerk whose model picks a tool by a word in the message: "refund" (needs confirmation),
"transfer" (the tool asks for confirmation with a payload), "ask" (a long-running tool),
"both" (two long-running tools at once), "boom" (the model fails); anything else is echoed
back as streamed text. It reports the tool results it is shown."""

from __future__ import annotations

import json
from typing import Any

from scripted import ran

from cairn import Agent, FunctionTool, LongRunningFunctionTool, ToolContext
from cairn.models.llm_request import LlmRequest
from cairn.testing import Call, ScriptedLlm, Stream


def refund(amount: int) -> dict[str, Any]:
    """Refund an amount to the customer."""
    ran("refund")
    return {"refunded": amount}


def transfer(amount: int, tool_context: ToolContext) -> dict[str, Any]:
    """Move money; asks a human first, with the amount as a payload they may change."""
    confirmation = tool_context.tool_confirmation
    if confirmation is None:
        tool_context.request_confirmation(hint=f"Transfer {amount}?", payload={"amount": amount})
        return {"status": "waiting for approval"}
    ran("transfer")
    return {"transferred": (confirmation.payload or {}).get("amount", amount)}


def ask_manager(question: str) -> None:
    """Ask a manager; the answer comes later."""
    ran("ask_manager")


def ask_finance(question: str) -> None:
    """Ask finance; the answer comes later."""
    ran("ask_finance")


def respond(request: LlmRequest) -> Any:
    last = request.contents[-1]
    parts = last.parts or []
    results = {
        p.function_response.name: p.function_response.response
        for p in parts
        if p.function_response is not None
    }
    if results:
        return "results: " + json.dumps(results, sort_keys=True)
    text = " ".join(p.text or "" for p in parts)
    if "refund" in text:
        return Call("refund", id="call-refund", amount=50)
    if "transfer" in text:
        return Call("transfer", id="call-transfer", amount=100)
    if "both" in text:
        return [
            Call("ask_manager", id="call-manager", question="ok?"),
            Call("ask_finance", id="call-finance", question="budget?"),
        ]
    if "boom" in text:
        raise RuntimeError("the model is down")
    if "ask" in text:
        return Call("ask_manager", id="call-manager", question=text)
    return Stream(["you ", "said: ", text])


root_agent = Agent(
    name="clerk",
    model=ScriptedLlm(respond=respond),
    tools=[
        FunctionTool(refund, require_confirmation=True),
        transfer,
        LongRunningFunctionTool(ask_manager),
        LongRunningFunctionTool(ask_finance),
    ],
)
