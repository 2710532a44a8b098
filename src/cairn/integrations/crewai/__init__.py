"""ADK's ``google.adk.integrations.crewai`` package: ``CrewaiTool``."""

from cairn.integrations.crewai.crewai_tool import CrewaiTool

__all__ = ["CrewaiTool"]
