"""Google Search beside other tools: a sub-agent that only searches, offered as a function
(ADK's ``GoogleSearchAgentTool``).

Gemini models before 3 take no built-in tool in a request that declares functions. ADK's
workaround, which cairn follows: an agent with other tools (or agents to transfer to) and
``GoogleSearchTool(bypass_multi_tools_limit=True)`` is offered this tool instead, whose agent
has Google Search alone; the grounding of its answer is carried over to the caller's reply.
"""

from __future__ import annotations

from cairn.agents.agent_tool import AgentTool
from cairn.agents.llm_agent import LlmAgent
from cairn.models.base_llm import BaseLlm
from cairn.tools.google_search_tool import google_search

_INSTRUCTION = (
    "Search Google for what you are asked and answer from the search results. You have no "
    "functions to call: use only your built-in Google Search."
)


def create_google_search_agent(model: str | BaseLlm) -> LlmAgent:
    """An agent named ``google_search_agent`` whose one tool is Google Search."""
    return LlmAgent(
        name="google_search_agent",
        model=model,
        description="Answers a question with Google Search grounding.",
        instruction=_INSTRUCTION,
        tools=[google_search],
    )


class GoogleSearchAgentTool(AgentTool):
    """``agent`` (see ``create_google_search_agent``) as a tool; the grounding of its answer
    goes on to the calling agent's reply (``propagate_grounding_metadata=True``)."""

    def __init__(self, agent: LlmAgent) -> None:
        super().__init__(agent, propagate_grounding_metadata=True)
        self.agent = agent


__all__ = ["GoogleSearchAgentTool", "create_google_search_agent"]
