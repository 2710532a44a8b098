"""Web grounding for enterprise compliance, run by Gemini itself (ADK's
``enterprise_web_search``; not Vertex AI Search, see ``VertexAiSearchTool``)."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn.tools.gemini_built_in_tool import GeminiBuiltInTool


class EnterpriseWebSearchTool(GeminiBuiltInTool):
    """Lets a Gemini model ground its answer in a web index meant for regulated use. A Vertex
    AI feature (``GOOGLE_GENAI_USE_VERTEXAI=true``): the Gemini API refuses it, and cairn says
    so before sending."""

    def __init__(self) -> None:
        super().__init__(name="enterprise_web_search", description="enterprise_web_search")

    def built_in_tool(self, tool_context: Any) -> types.Tool:
        return types.Tool(enterprise_web_search=types.EnterpriseWebSearch())


enterprise_web_search_tool = EnterpriseWebSearchTool()
"""The tool to put in an agent's ``tools`` (``cairn.tools.enterprise_web_search``)."""

__all__ = ["EnterpriseWebSearchTool", "enterprise_web_search_tool"]
