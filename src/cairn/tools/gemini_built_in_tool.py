"""Tools that Gemini runs itself (Google Search, URL context, Maps...): the request names them.

Such a tool declares no function and is never called by cairn: ``process_llm_request``
adds its ``types.Tool`` (``google_search=...``, ``url_context=...``) to the request, the
model searches or fetches on the provider's side, and its answer comes back grounded
(``Event.grounding_metadata``, ``Event.url_context_metadata``). Only Gemini models have
them; giving one to another model is an error that says so before anything is sent.
"""

from __future__ import annotations

import abc
from typing import Any

from google.genai import types

from cairn.errors import CairnError
from cairn.models.llm_request import LlmRequest
from cairn.models.model_names import (
    DISABLE_GEMINI_MODEL_ID_CHECK,
    gemini_model_check_disabled,
    is_gemini_model,
)
from cairn.tools.base_tool import BaseTool


class BuiltInToolNotSupportedError(CairnError, ValueError):
    """A Gemini built-in tool was given to an agent whose model is not Gemini (a
    ``ValueError``, as ADK raises)."""

    def __init__(self, *, tool: str, model: str | None) -> None:
        self.tool = tool
        self.model = model
        super().__init__(
            f"{tool} is a Gemini built-in tool and is not supported for model {model!r}: "
            "give the agent a Gemini model (e.g. model='gemini-2.5-flash'), or move the tool "
            "to a Gemini agent of its own and offer that agent as an AgentTool. A Gemini "
            f"model under another name is accepted with {DISABLE_GEMINI_MODEL_ID_CHECK}=true"
        )


class GeminiBuiltInTool(BaseTool):
    """A tool the Gemini model runs on its side: subclasses say which ``types.Tool`` the
    request carries (``built_in_tool``)."""

    def __init__(self, *, name: str, description: str) -> None:
        super().__init__(name=name, description=description)

    @abc.abstractmethod
    def built_in_tool(self, tool_context: Any) -> types.Tool:
        """The entry this tool adds to ``config.tools`` (e.g. ``Tool(google_search=...)``)."""

    def supports_model(self, model: str | None) -> bool:
        """Whether ``model`` has this tool: a Gemini model (or any, with the check off)."""
        return is_gemini_model(model) or gemini_model_check_disabled()

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        if not self.supports_model(llm_request.model):
            raise BuiltInToolNotSupportedError(
                tool=f"{type(self).__name__} ({self.name})", model=llm_request.model
            )
        tools = list(llm_request.config.tools or [])
        tools.append(self.built_in_tool(tool_context))
        llm_request.config.tools = tools

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        raise TypeError(
            f"{type(self).__name__} is run by the Gemini model itself and is never called as "
            "a function; give it to an LlmAgent's tools"
        )


__all__ = ["BuiltInToolNotSupportedError", "GeminiBuiltInTool"]
