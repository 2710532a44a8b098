"""``load_mcp_resource``: the model is told an MCP server's resources and can ask to see some.

``McpToolset(..., use_mcp_resources=True)`` adds it to the toolset's tools.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from typing import TYPE_CHECKING, Any

from google.genai import types

from cairn.models.llm_request import LlmRequest
from cairn.tools.artifact_parts import as_safe_part_for_llm
from cairn.tools.base_tool import BaseTool

if TYPE_CHECKING:
    from cairn.tools.mcp_toolset import McpToolset

logger = logging.getLogger(__name__)


class LoadMcpResourceTool(BaseTool):
    """Lists an MCP server's resources in the instruction; shows those the model asks for.

    Each request tells the model the names of the toolset's resources (as
    ``list_resources()`` gives them). When the model calls
    ``load_mcp_resource(resource_names=[...])``, the next request carries each
    named resource's contents as a user content (``Resource <name> is:`` and the
    part: text as text, a blob as inline data where models take it inline, else
    described), as ADK sends it. The contents are shown to the model, not copied
    into the session's events: the log keeps only the names. A resource that
    cannot be read is named in the instruction with the reason.
    """

    def __init__(self, mcp_toolset: McpToolset) -> None:
        super().__init__(
            name="load_mcp_resource",
            description=(
                "Loads the named resources of the MCP server so that their contents are "
                "shown to you in the next step. Call it when you need a resource's contents."
            ),
            idempotent=True,
        )
        self.mcp_toolset = mcp_toolset

    def declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema={
                "type": "object",
                "properties": {
                    "resource_names": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "The names of the resources to load.",
                    }
                },
            },
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        names = [str(name) for name in args.get("resource_names") or []]
        return {
            "resource_names": names,
            "status": (
                "The contents of these resources are shown to you in the next step only; "
                "call load_mcp_resource again to see them later."
            ),
        }

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        llm_request.append_tools([self])
        paragraphs: list[str] = []
        try:
            available = await self.mcp_toolset.list_resources(tool_context)
        except Exception as error:  # the server is down: the model goes on without them
            logger.warning("listing the MCP server's resources failed: %r", error)
            available = []
        if available:
            paragraphs.append(
                "You have these MCP resources: "
                + json.dumps(available)
                + ". When the user's request is about one of them, call load_mcp_resource "
                "with its name first, to see its contents, before you answer."
            )
        shown: list[types.Content] = []
        for name in self._requested_names(tool_context):
            try:
                contents = await self.mcp_toolset.read_resource(name, tool_context)
            except Exception as error:
                logger.warning("reading the MCP resource %r failed: %r", name, error)
                paragraphs.append(f"The MCP resource {name!r} could not be read: {error}")
                continue
            for content in contents:
                heading = types.Part(text=f"Resource {name} is:")
                shown.append(types.Content(role="user", parts=[heading, _as_part(content, name)]))
        llm_request.append_instructions(paragraphs)
        llm_request.contents.extend(shown)

    def _requested_names(self, tool_context: Any) -> list[str]:
        """The names this tool was asked to load in the latest event, if it answers a call."""
        events = tool_context.session.events
        content = events[-1].content if events else None
        names: list[str] = []
        for part in (content.parts or []) if content is not None else []:
            response = part.function_response
            if response is None or response.name != self.name:
                continue
            for name in (response.response or {}).get("resource_names") or []:
                if str(name) not in names:
                    names.append(str(name))
        return names


def _as_part(content: Any, name: str) -> types.Part:
    """One ``TextResourceContents`` / ``BlobResourceContents`` as a part a model accepts."""
    text = getattr(content, "text", None)
    if text is not None:
        return types.Part(text=str(text))
    blob = getattr(content, "blob", None)
    mime_type = getattr(content, "mime_type", None) or getattr(content, "mimeType", None)
    if blob is None:
        return types.Part(text=f"[The MCP resource {name} has no text or data]")
    try:
        data = base64.b64decode(blob, validate=True)
    except (binascii.Error, ValueError):
        return types.Part(text=f"[The data of the MCP resource {name} is not valid base64]")
    part = types.Part(
        inline_data=types.Blob(data=data, mime_type=mime_type or "application/octet-stream")
    )
    return as_safe_part_for_llm(part, name)


__all__ = ["LoadMcpResourceTool"]
