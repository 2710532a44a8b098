"""The keys of the older ``*.test.json`` eval files (a list of turns)."""

from __future__ import annotations


class EvalConstants:
    """Key names used by the legacy eval data format."""

    QUERY = "query"
    EXPECTED_TOOL_USE = "expected_tool_use"
    RESPONSE = "response"
    REFERENCE = "reference"
    TOOL_NAME = "tool_name"
    TOOL_INPUT = "tool_input"
    MOCK_TOOL_OUTPUT = "mock_tool_output"
