"""cairn tools described as MCP tools (ADK's ``conversion_utils``): for serving them over MCP."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn.tools.base_tool import BaseTool
from cairn.tools.mcp_sessions import mcp_module

_COMMON = {
    "title": "title",
    "description": "description",
    "default": "default",
    "enum": "enum",
    "format": "format",
    "example": "example",
}
"""Gemini ``Schema`` fields that keep their meaning (and name) in JSON Schema, any type."""
_BY_TYPE: dict[types.Type, dict[str, str]] = {
    types.Type.STRING: {"pattern": "pattern", "min_length": "minLength", "max_length": "maxLength"},
    types.Type.NUMBER: {"minimum": "minimum", "maximum": "maximum"},
    types.Type.INTEGER: {"minimum": "minimum", "maximum": "maximum"},
    types.Type.ARRAY: {"min_items": "minItems", "max_items": "maxItems"},
    types.Type.OBJECT: {
        "required": "required",
        "min_properties": "minProperties",
        "max_properties": "maxProperties",
    },
}
"""Validation fields JSON Schema names in camelCase, for the type they apply to."""


def gemini_to_json_schema(gemini_schema: types.Schema) -> dict[str, Any]:
    """A Gemini ``types.Schema`` as a JSON Schema dict (ADK's function).

    The type in lower case (``"null"`` when unspecified), ``nullable``, the common
    fields (title, description, default, enum, format, example), the type's own
    validation fields in JSON Schema's names (``minLength``, ``minItems``,
    ``required``...), and ``items``, ``properties`` and ``anyOf`` converted in turn.
    Gemini's ``property_ordering`` has no JSON Schema meaning and is left out.
    """
    if not isinstance(gemini_schema, types.Schema):
        raise TypeError(
            "gemini_to_json_schema takes a google.genai.types.Schema, got a "
            f"{type(gemini_schema).__name__}; build one with types.Schema(type=..., ...)"
        )
    kind = gemini_schema.type
    schema: dict[str, Any] = {
        "type": kind.value.lower()
        if kind is not None and kind != types.Type.TYPE_UNSPECIFIED
        else "null"
    }
    if gemini_schema.nullable:
        schema["nullable"] = True
    fields = dict(_COMMON)
    if kind is not None:
        fields.update(_BY_TYPE.get(kind, {}))
    for attribute, key in fields.items():
        value = getattr(gemini_schema, attribute)
        if value is not None:
            schema[key] = value
    if kind == types.Type.ARRAY and gemini_schema.items is not None:
        schema["items"] = gemini_to_json_schema(gemini_schema.items)
    if kind == types.Type.OBJECT and gemini_schema.properties is not None:
        schema["properties"] = {
            name: gemini_to_json_schema(sub) for name, sub in gemini_schema.properties.items()
        }
    if gemini_schema.any_of is not None:
        schema["anyOf"] = [gemini_to_json_schema(sub) for sub in gemini_schema.any_of]
    return schema


def adk_to_mcp_tool_type(tool: BaseTool) -> Any:
    """``tool`` as an ``mcp.types.Tool`` (ADK's function): its name, description and input
    schema (the declaration's JSON schema, or its Gemini ``parameters`` converted; an
    empty schema for a tool without parameters)."""
    declaration = tool.declaration()
    input_schema: dict[str, Any] = {}
    if declaration is not None and declaration.parameters_json_schema:
        input_schema = dict(declaration.parameters_json_schema)
    elif declaration is not None and declaration.parameters is not None:
        input_schema = gemini_to_json_schema(declaration.parameters)
    mcp_types = mcp_module("mcp.types")
    return mcp_types.Tool.model_validate(
        {"name": tool.name, "description": tool.description, "inputSchema": input_schema}
    )


__all__ = ["adk_to_mcp_tool_type", "gemini_to_json_schema"]
