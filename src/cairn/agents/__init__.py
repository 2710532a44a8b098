"""Agents and the contexts they run with."""

from cairn.agents.agent_config_error import AgentConfigError
from cairn.agents.agent_tool import AgentTool
from cairn.agents.base_agent import BaseAgent
from cairn.agents.base_agent_config import BaseAgentConfig
from cairn.agents.callback_hook import CallbackHook, CallbackInfo
from cairn.agents.context import CallbackContext, Context, ToolContext
from cairn.agents.invocation_context import InvocationContext, new_invocation_id
from cairn.agents.live_request_queue import LiveRequest, LiveRequestQueue
from cairn.agents.llm_agent import Agent, LlmAgent
from cairn.agents.llm_agent_config import LlmAgentConfig
from cairn.agents.loop_agent import LoopAgent
from cairn.agents.loop_agent_config import LoopAgentConfig
from cairn.agents.mcp_instruction_provider import McpInstructionProvider
from cairn.agents.parallel_agent import ParallelAgent
from cairn.agents.parallel_agent_config import ParallelAgentConfig
from cairn.agents.readonly_context import ReadonlyContext
from cairn.agents.run_config import MultitaskStrategy, RunConfig, StreamingMode
from cairn.agents.sequential_agent import SequentialAgent
from cairn.agents.sequential_agent_config import SequentialAgentConfig

__all__ = [
    "Agent",
    "AgentConfigError",
    "AgentTool",
    "BaseAgent",
    "BaseAgentConfig",
    "CallbackContext",
    "CallbackHook",
    "CallbackInfo",
    "Context",
    "InvocationContext",
    "LiveRequest",
    "LiveRequestQueue",
    "LlmAgent",
    "LlmAgentConfig",
    "LoopAgent",
    "LoopAgentConfig",
    "McpInstructionProvider",
    "MultitaskStrategy",
    "ParallelAgent",
    "ParallelAgentConfig",
    "ReadonlyContext",
    "RunConfig",
    "SequentialAgent",
    "SequentialAgentConfig",
    "StreamingMode",
    "ToolContext",
    "new_invocation_id",
]
