"""URL context, run by Gemini itself (ADK's ``url_context``): the model reads the URLs a
prompt names."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn.tools.gemini_built_in_tool import GeminiBuiltInTool


class UrlContextTool(GeminiBuiltInTool):
    """Lets a Gemini model fetch the pages whose URLs are in the conversation and answer from
    them; ``Event.url_context_metadata`` says which URLs it fetched and how that went."""

    def __init__(self) -> None:
        super().__init__(name="url_context", description="url_context")

    def built_in_tool(self, tool_context: Any) -> types.Tool:
        return types.Tool(url_context=types.UrlContext())


url_context = UrlContextTool()
"""The tool to put in an agent's ``tools``."""

__all__ = ["UrlContextTool", "url_context"]
