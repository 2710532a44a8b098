"""Tools: what an LLM agent can call."""

from cairn.tools.base_tool import BaseTool, BaseToolset
from cairn.tools.function_tool import FunctionTool, LongRunningFunctionTool

__all__ = ["BaseTool", "BaseToolset", "FunctionTool", "LongRunningFunctionTool"]
