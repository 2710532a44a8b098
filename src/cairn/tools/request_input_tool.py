"""``request_input``: a tool the model calls to ask the user something and wait for the answer."""

from __future__ import annotations

from typing import Any

from cairn.events.request_input import REQUEST_INPUT_FUNCTION
from cairn.tools.function_tool import LongRunningFunctionTool


def _ask_the_user(message: str, response_schema: dict[str, Any] | None = None) -> None:
    """Ask the user a question and wait for the answer.

    Use this when you need more information or a clarification before going on.

    Args:
      message: The question to show the user.
      response_schema: A JSON schema of the answer expected: {"type": "string"} for free
        text, {"type": "boolean"} for yes or no, an object schema for structured input.
    """
    return None  # no result yet: the call waits for the user's FunctionResponse


_ask_the_user.__name__ = REQUEST_INPUT_FUNCTION

request_input = LongRunningFunctionTool(_ask_the_user)
"""ADK's ``request_input``: ``LlmAgent(tools=[request_input])`` lets the model pause the run
with an ``adk_request_input`` call (long-running); the user's ``FunctionResponse`` to that
call (answered by id, from any process) resumes it, and the model gets the answer."""
