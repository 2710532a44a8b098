"""Scripted models whose replies depend only on what they are shown (the same in any process)."""

from __future__ import annotations

import json
from typing import Any

from cairn.models.llm_request import LlmRequest
from cairn.testing import Call, ScriptedLlm


def _desk(request: LlmRequest) -> Any:
    parts = request.contents[-1].parts or []
    results = {
        p.function_response.name: p.function_response.response for p in parts if p.function_response
    }
    if results:
        return "results: " + json.dumps(results, sort_keys=True)
    text = " ".join(p.text or "" for p in parts)
    if "hours" in text:
        return Call("lookup", id="call-lookup", city="Paris")
    if "refund" in text:
        return Call("refund", id="call-refund", amount=30)
    if "count" in text:
        return Call("count", id="call-count")
    if "spanish" in text:
        return Call("translator", id="call-translate", request="thank you")
    if "plan" in text:
        return Call("transfer_to_agent", id="call-plan", agent_name="planner")
    if "hello" in text:
        return Call("transfer_to_agent", id="call-hello", agent_name="greeter")
    return "How can I help?"


desk_model = ScriptedLlm(respond=_desk)
translator_model = ScriptedLlm(respond=lambda request: "gracias")
drafter_model = ScriptedLlm(respond=lambda request: "Museum at 9.")
reviewer_model = ScriptedLlm(
    respond=lambda request: (
        "Reviewed: " + str(request.config.system_instruction).split("draft: ")[-1].split("\n")[0]
    )
)
