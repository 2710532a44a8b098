"""ADK's path for `LongRunningFunctionTool`: a tool whose result arrives later."""

from cairn.tools.function_tool import LongRunningFunctionTool

__all__ = ["LongRunningFunctionTool"]
