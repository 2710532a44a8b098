"""``LangchainTool`` at ADK's ``google.adk.integrations.langchain`` path (the same class as
``cairn.tools.langchain_tool.LangchainTool``)."""

from cairn.tools.langchain_tool import LangchainTool, LangchainToolConfig

__all__ = ["LangchainTool", "LangchainToolConfig"]
