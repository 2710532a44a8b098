"""The callbacks root_agent.yaml names."""

from __future__ import annotations

from typing import Any


def greet(callback_context: Any) -> None:
    callback_context.state["visitor"] = "Ada"


def count_model_call(callback_context: Any, llm_request: Any) -> None:
    callback_context.state["model_calls"] = int(callback_context.state.get("model_calls", 0)) + 1


def tag_lookup(tool: Any, args: Any, tool_context: Any, tool_response: Any) -> Any:
    if tool.name == "lookup":
        return {**tool_response, "checked": True}
    return None
