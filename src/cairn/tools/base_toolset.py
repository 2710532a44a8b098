"""ADK's path for `BaseToolset`: a group of tools resolved per request."""

from cairn.tools.base_tool import BaseToolset

__all__ = ["BaseToolset"]
