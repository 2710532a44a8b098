"""ADK's path for ``GoogleSearchAgentTool``: Google Search in a sub-agent offered as a tool."""

from cairn.agents.google_search_agent_tool import GoogleSearchAgentTool, create_google_search_agent

__all__ = ["GoogleSearchAgentTool", "create_google_search_agent"]
