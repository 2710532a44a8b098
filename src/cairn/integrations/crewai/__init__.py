"""ADK's ``google.adk.integrations.crewai`` package: ``CrewaiTool``."""

from cairn.integrations.crewai.crewai_tool import CrewaiTool, CrewaiToolConfig

__all__ = ["CrewaiTool", "CrewaiToolConfig"]
