"""Google Maps grounding, run by Gemini itself (ADK's ``google_maps_grounding``)."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn.tools.gemini_built_in_tool import GeminiBuiltInTool


class GoogleMapsGroundingTool(GeminiBuiltInTool):
    """Lets a Gemini model ground its answer in Google Maps places (sources in
    ``Event.grounding_metadata``). As ADK notes, this is a Vertex AI feature
    (``GOOGLE_GENAI_USE_VERTEXAI=true``)."""

    def __init__(self) -> None:
        super().__init__(name="google_maps", description="google_maps")

    def built_in_tool(self, tool_context: Any) -> types.Tool:
        return types.Tool(google_maps=types.GoogleMaps())


google_maps_grounding = GoogleMapsGroundingTool()
"""The tool to put in an agent's ``tools``."""

__all__ = ["GoogleMapsGroundingTool", "google_maps_grounding"]
