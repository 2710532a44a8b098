"""ADK's path for `transfer_to_agent`: the tool an LLM agent hands over with."""

from cairn.agents.llm_agent import transfer_to_agent

__all__ = ["transfer_to_agent"]
