"""ADK's path for `ToolExecutionError` and `ToolErrorType`."""

from cairn.errors import ToolErrorType, ToolExecutionError

__all__ = ["ToolErrorType", "ToolExecutionError"]
