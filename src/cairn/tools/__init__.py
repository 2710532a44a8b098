"""Tools: what an LLM agent can call."""

from cairn.tools.base_tool import BaseTool, BaseToolset
from cairn.tools.function_tool import FunctionTool, LongRunningFunctionTool
from cairn.tools.load_artifacts_tool import LoadArtifactsTool, load_artifacts
from cairn.tools.mcp_toolset import (
    McpTool,
    McpToolset,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)

__all__ = [
    "BaseTool",
    "BaseToolset",
    "FunctionTool",
    "LoadArtifactsTool",
    "LongRunningFunctionTool",
    "McpTool",
    "McpToolset",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
    "load_artifacts",
]
