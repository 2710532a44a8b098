"""Google Search grounding, run by Gemini itself (ADK's ``google_search``)."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn.models.llm_request import LlmRequest
from cairn.tools.gemini_built_in_tool import GeminiBuiltInTool


class GoogleSearchTool(GeminiBuiltInTool):
    """Lets a Gemini model search Google and ground its answer in the results
    (``Event.grounding_metadata`` lists the queries, sources and supported passages).

    ``model`` sends the request to that model instead of the agent's.
    ``bypass_multi_tools_limit=True``: in an agent with other tools (or agents to transfer
    to), the search runs in a sub-agent of its own, offered to the model as a function
    (``GoogleSearchAgentTool``), as Gemini models before 3 take no built-in tool beside
    function declarations.
    """

    def __init__(self, *, bypass_multi_tools_limit: bool = False, model: str | None = None) -> None:
        super().__init__(name="google_search", description="google_search")
        self.bypass_multi_tools_limit = bypass_multi_tools_limit
        self.model = model

    def built_in_tool(self, tool_context: Any) -> types.Tool:
        return types.Tool(google_search=types.GoogleSearch())

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        if self.model is not None:
            llm_request.model = self.model
        await super().process_llm_request(tool_context=tool_context, llm_request=llm_request)


google_search = GoogleSearchTool()
"""The tool to put in an agent's ``tools``: ``Agent(..., tools=[google_search])``."""

__all__ = ["GoogleSearchTool", "google_search"]
