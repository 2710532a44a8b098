"""ADK's path for describing cairn tools as MCP tools."""

from cairn.tools.mcp_conversion import adk_to_mcp_tool_type, gemini_to_json_schema

__all__ = ["adk_to_mcp_tool_type", "gemini_to_json_schema"]
