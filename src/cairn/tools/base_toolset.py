"""ADK's path for `BaseToolset`: a group of tools resolved per request."""

from cairn.tools.base_tool import BaseToolset, ToolPredicate

__all__ = ["BaseToolset", "ToolPredicate"]
