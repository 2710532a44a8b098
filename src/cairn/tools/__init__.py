"""Tools: what an LLM agent can call."""

from cairn.tools.base_tool import BaseTool, BaseToolset
from cairn.tools.function_tool import FunctionTool, LongRunningFunctionTool
from cairn.tools.load_artifacts_tool import LoadArtifactsTool, load_artifacts
from cairn.tools.load_memory_tool import LoadMemoryTool, load_memory
from cairn.tools.mcp_toolset import (
    McpTool,
    McpToolset,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from cairn.tools.preload_memory_tool import PreloadMemoryTool, preload_memory

__all__ = [
    "BaseTool",
    "BaseToolset",
    "FunctionTool",
    "LoadArtifactsTool",
    "LoadMemoryTool",
    "LongRunningFunctionTool",
    "McpTool",
    "McpToolset",
    "PreloadMemoryTool",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
    "load_artifacts",
    "load_memory",
    "preload_memory",
]
