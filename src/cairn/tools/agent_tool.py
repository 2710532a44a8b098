"""ADK's path for `AgentTool`: an agent offered to a model as a tool."""

from cairn.agents.agent_tool import AgentTool, AgentToolConfig

__all__ = ["AgentTool", "AgentToolConfig"]
