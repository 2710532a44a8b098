"""Serving cairn over MCP: ``to_mcp_server`` (an agent as an MCP server, spoken to by a real
MCP client in another process) and the conversion of cairn tools to MCP tool types."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from cairn import Agent, FunctionTool
from cairn.testing import ScriptedLlm
from cairn.tools import McpToolset
from cairn.tools.mcp_tool import adk_to_mcp_tool_type, gemini_to_json_schema, to_mcp_server
from cairn.tools.mcp_tool.conversion_utils import gemini_to_json_schema as at_its_path

mcp = pytest.importorskip("mcp")

AGENT_SERVER = Path(__file__).resolve().parent / "mcp_servers" / "agent_server.py"
ROOT = Path(__file__).resolve().parents[2]


async def test_an_agent_served_over_mcp_keeps_one_conversation_per_connection(
    tmp_path: Path,
) -> None:
    def echo_server() -> Any:
        return mcp.StdioServerParameters(
            command=sys.executable, args=[str(AGENT_SERVER)], cwd=str(ROOT)
        )

    with (tmp_path / "server.log").open("w") as log:
        first, second = McpToolset(echo_server(), errlog=log), McpToolset(echo_server(), errlog=log)
        try:
            [tool] = await first.get_tools()
            declaration = tool.declaration()
            assert declaration is not None
            assert declaration.name == "echo" and declaration.description == (
                "Repeats what it was told."
            )
            assert declaration.parameters_json_schema["required"] == ["request"]
            one = await tool.run_async(args={"request": "tides"}, tool_context=None)
            assert one == {"content": [{"type": "text", "text": "heard: tides"}], "isError": False}
            two = await tool.run_async(args={"request": "moon"}, tool_context=None)
            assert two["content"][0]["text"] == "heard: tides | moon"
            # Another connection is another conversation.
            [other] = await second.get_tools()
            three = await other.run_async(args={"request": "sun"}, tool_context=None)
            assert three["content"][0]["text"] == "heard: sun"
        finally:
            await first.close()
            await second.close()


def test_to_mcp_server_serves_an_agent_only() -> None:
    server = to_mcp_server(Agent(name="helper", model=ScriptedLlm()), name="ask_helper")
    assert server.name == "ask_helper"
    with pytest.raises(TypeError, match="serves an agent"):
        to_mcp_server(FunctionTool(len))  # type: ignore[arg-type]


def test_a_gemini_schema_becomes_json_schema() -> None:
    assert at_its_path is gemini_to_json_schema
    schema = types.Schema(
        type=types.Type.OBJECT,
        description="A booking.",
        properties={
            "city": types.Schema(type=types.Type.STRING, min_length=2, pattern="^[A-Z]"),
            "nights": types.Schema(type=types.Type.INTEGER, minimum=1, maximum=30),
            "tags": types.Schema(
                type=types.Type.ARRAY, items=types.Schema(type=types.Type.STRING), max_items=3
            ),
            "note": types.Schema(
                any_of=[types.Schema(type=types.Type.STRING), types.Schema(type=types.Type.NULL)],
                nullable=True,
            ),
        },
        required=["city"],
        property_ordering=["city", "nights"],
    )
    assert gemini_to_json_schema(schema) == {
        "type": "object",
        "description": "A booking.",
        "properties": {
            "city": {"type": "string", "minLength": 2, "pattern": "^[A-Z]"},
            "nights": {"type": "integer", "minimum": 1, "maximum": 30},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "note": {
                "type": "null",
                "nullable": True,
                "anyOf": [{"type": "string"}, {"type": "null"}],
            },
        },
        "required": ["city"],
    }
    with pytest.raises(TypeError, match=r"takes a google\.genai\.types\.Schema, got a dict"):
        gemini_to_json_schema({"type": "object"})  # type: ignore[arg-type]


def test_a_cairn_tool_becomes_an_mcp_tool() -> None:
    def book(city: str, nights: int = 1) -> str:
        """Book a room."""
        return f"{city} x{nights}"

    tool = adk_to_mcp_tool_type(FunctionTool(book))
    assert isinstance(tool, mcp.types.Tool)
    assert tool.name == "book" and tool.description == "Book a room."
    schema = tool.model_dump(by_alias=True)["inputSchema"]
    assert schema["properties"]["city"]["type"] == "string"
    assert schema["required"] == ["city"]
