"""``CrewaiTool`` at ADK's ``google.adk.integrations.crewai`` path (the same class as
``cairn.tools.crewai_tool.CrewaiTool``)."""

from cairn.tools.crewai_tool import CrewaiTool, CrewaiToolConfig

__all__ = ["CrewaiTool", "CrewaiToolConfig"]
