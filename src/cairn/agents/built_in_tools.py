"""ADK's rules for Gemini built-in tools beside function tools and agent transfer.

Gemini models before 3 refuse a request that has both a built-in tool (Google Search,
Vertex AI Search...) and function declarations. ADK's answers, which cairn follows:

- ``GoogleSearchTool(bypass_multi_tools_limit=True)`` in an agent with other tools, or
  agents to transfer to, is replaced by a ``GoogleSearchAgentTool``: a sub-agent that only
  searches, called like a function. Without the flag the search goes in the same request
  (which Gemini 3 accepts and earlier models refuse with HTTP 400).
- ``VertexAiSearchTool(bypass_multi_tools_limit=True)`` there is replaced, in ADK, by a
  Discovery Engine API client; cairn makes no Google Cloud API calls of its own, so it
  says what to do instead (``BuiltInToolCombinationError``).
- An agent whose search tools cannot go with the ``transfer_to_agent`` function on its
  model (before Gemini 3) fails when it could transfer to a sub-agent; when its only
  targets are its parent or peers it is simply not offered the transfer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cairn.errors import CairnError
from cairn.models.model_names import accepts_built_in_tools_with_functions
from cairn.tools.base_tool import BaseTool
from cairn.tools.enterprise_search_tool import EnterpriseWebSearchTool
from cairn.tools.google_search_tool import GoogleSearchTool
from cairn.tools.vertex_ai_search_tool import VertexAiSearchTool

if TYPE_CHECKING:
    from cairn.agents.base_agent import BaseAgent
    from cairn.agents.llm_agent import LlmAgent


class BuiltInToolCombinationError(CairnError, ValueError):
    """An agent combines a Gemini built-in tool with function tools or agent transfer in a
    way its model does not accept, and cairn has no substitute (a ``ValueError``, as ADK
    raises)."""


def offered_tool(tool: BaseTool, *, agent: LlmAgent, crowded: bool) -> BaseTool:
    """The tool ``agent``'s model is offered for ``tool``; ``crowded``: the agent has other
    tools or agents to transfer to (ADK's test: more than one tool, or any transfer target)."""
    if not crowded:
        return tool
    if isinstance(tool, GoogleSearchTool) and tool.bypass_multi_tools_limit:
        from cairn.agents.google_search_agent_tool import (
            GoogleSearchAgentTool,
            create_google_search_agent,
        )

        return GoogleSearchAgentTool(create_google_search_agent(agent.canonical_model))
    if isinstance(tool, VertexAiSearchTool) and tool.bypass_multi_tools_limit:
        raise BuiltInToolCombinationError(
            f"agent {agent.name!r} has VertexAiSearchTool(bypass_multi_tools_limit=True) beside "
            "other tools: ADK then queries the Discovery Engine API itself, which cairn does "
            "not do. Use a Gemini 3 model without bypass_multi_tools_limit (it takes Vertex AI "
            "Search beside functions), or give VertexAiSearchTool to an agent of its own and "
            "offer that agent as an AgentTool"
        )
    return tool


def transfer_conflict(agent: LlmAgent) -> str | None:
    """Why ``agent``'s built-in search tools cannot go with the transfer function on its
    model (a tool's own ``model`` wins), or None when they can."""
    for tool in agent.tools:
        if not isinstance(tool, GoogleSearchTool | VertexAiSearchTool | EnterpriseWebSearchTool):
            continue
        model = agent.canonical_model.model
        tool_model: Any = getattr(tool, "model", None)
        if accepts_built_in_tools_with_functions(tool_model or model):
            continue
        kind = type(tool).__name__
        if isinstance(tool, EnterpriseWebSearchTool):
            return (
                f"agent {agent.name!r} can transfer to sub-agents but has {kind}, which "
                f"Gemini models before 3 ({model!r}) do not take beside the transfer_to_agent "
                "function. Use a Gemini 3 model, or move the search to a single_turn sub-agent"
            )
        if not tool.bypass_multi_tools_limit:
            return (
                f"agent {agent.name!r} can transfer to sub-agents but has {kind} without "
                f"bypass_multi_tools_limit=True, which Gemini models before 3 ({model!r}) do "
                "not take beside the transfer_to_agent function. Use a Gemini 3 model, or set "
                f"{kind}(bypass_multi_tools_limit=True)"
            )
    return None


def offered_transfer_targets(agent: LlmAgent, targets: list[BaseAgent]) -> list[BaseAgent]:
    """The agents ``agent``'s model is offered to transfer to: ``targets``, unless its built-in
    tools conflict with the transfer function (then none, or an error if it could transfer
    to one of its own sub-agents)."""
    if not targets:
        return targets
    conflict = transfer_conflict(agent)
    if conflict is None:
        return targets
    if any(target is child for target in targets for child in agent.sub_agents):
        raise BuiltInToolCombinationError(conflict)
    return []


__all__ = [
    "BuiltInToolCombinationError",
    "offered_tool",
    "offered_transfer_targets",
    "transfer_conflict",
]
