"""ADK's ``google.adk.integrations.langchain`` package: ``LangchainTool``."""

from cairn.integrations.langchain.langchain_tool import LangchainTool, LangchainToolConfig

__all__ = ["LangchainTool", "LangchainToolConfig"]
