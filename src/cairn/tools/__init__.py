"""Tools: what an LLM agent can call.

`AgentTool` and `ToolContext` are built on agents (the layer above)
and are found here too, at ADK's addresses, when first asked for.
"""

import importlib
from typing import TYPE_CHECKING, Any

from cairn.auth.auth_tool import AuthToolArguments
from cairn.tools.base_tool import BaseTool, BaseToolset
from cairn.tools.enterprise_search_tool import enterprise_web_search_tool as enterprise_web_search
from cairn.tools.example_tool import ExampleTool
from cairn.tools.exit_loop_tool import exit_loop
from cairn.tools.function_tool import FunctionTool, LongRunningFunctionTool
from cairn.tools.get_user_choice_tool import get_user_choice_tool as get_user_choice
from cairn.tools.google_maps_grounding_tool import google_maps_grounding
from cairn.tools.google_search_tool import google_search
from cairn.tools.load_artifacts_tool import LoadArtifactsTool, load_artifacts
from cairn.tools.load_memory_tool import LoadMemoryTool, load_memory
from cairn.tools.mcp_sessions import (
    SseConnectionParams,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from cairn.tools.mcp_toolset import (
    McpTool,
    McpToolset,
)
from cairn.tools.mcp_toolset import (
    McpToolset as MCPToolset,
)
from cairn.tools.preload_memory_tool import PreloadMemoryTool, preload_memory
from cairn.tools.request_input_tool import request_input
from cairn.tools.transfer_to_agent_tool import TransferToAgentTool, transfer_to_agent
from cairn.tools.url_context_tool import url_context
from cairn.tools.vertex_ai_search_tool import VertexAiSearchTool

if TYPE_CHECKING:
    from cairn.tools.agent_tool import AgentTool
    from cairn.tools.tool_context import ToolContext

_ADDRESSES = {
    "AgentTool": "cairn.tools.agent_tool",
    "ToolContext": "cairn.tools.tool_context",
}


def __getattr__(name: str) -> Any:
    address = _ADDRESSES.get(name)
    if address is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(address), name)
    globals()[name] = value
    return value


__all__ = [
    "AgentTool",
    "AuthToolArguments",
    "BaseTool",
    "BaseToolset",
    "ExampleTool",
    "FunctionTool",
    "LoadArtifactsTool",
    "LoadMemoryTool",
    "LongRunningFunctionTool",
    "MCPToolset",
    "McpTool",
    "McpToolset",
    "PreloadMemoryTool",
    "SseConnectionParams",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
    "ToolContext",
    "TransferToAgentTool",
    "VertexAiSearchTool",
    "enterprise_web_search",
    "exit_loop",
    "get_user_choice",
    "google_maps_grounding",
    "google_search",
    "load_artifacts",
    "load_memory",
    "preload_memory",
    "request_input",
    "transfer_to_agent",
    "url_context",
]
