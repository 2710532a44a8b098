"""A request for input from outside (a human, another system): one kind of pause."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import Field, model_validator

from cairn.events._base import CamelModel

REQUEST_INPUT_FUNCTION = "adk_request_input"
"""The function name of the call that carries an input request (ADK's name)."""


class RequestInput(CamelModel):
    """Yielded by a workflow node to wait for an answer.

    It is stored as an ``adk_request_input`` function call whose id
    (``interrupt_id``) is in the event's ``long_running_tool_ids``; the
    invocation ends cleanly with the node waiting. A later ``run_async`` with a
    ``FunctionResponse`` of that id resumes it.
    """

    interrupt_id: str = Field(default_factory=lambda: f"input-{uuid.uuid4()}")
    message: str | None = None
    payload: Any = None
    response_schema: dict[str, Any] | None = None
    """A JSON schema the answer must match (checked when the answer arrives)."""

    @model_validator(mode="before")
    @classmethod
    def _prompt_is_message(cls, data: Any) -> Any:
        """``prompt=`` (ADK's other keyword for the text shown) is ``message``."""
        if isinstance(data, dict) and "prompt" in data:
            data = dict(data)
            prompt = data.pop("prompt")
            data.setdefault("message", prompt)
        return data
