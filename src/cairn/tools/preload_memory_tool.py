"""``preload_memory``: memories relevant to the user's message, shown before that message."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn.memory._text import content_text
from cairn.memory.memory_entry import MemoryEntry
from cairn.models.llm_request import LlmRequest
from cairn.tools.base_tool import BaseTool
from cairn.tools.load_memory_tool import memory_service_of


def past_conversations(memories: list[MemoryEntry]) -> str:
    """The memories as a paragraph for the model, one ``time author: text`` line each."""
    lines = []
    for memory in memories:
        text = content_text(memory.content).strip()
        prefix = f"[{memory.timestamp}] " if memory.timestamp else ""
        lines.append(f"{prefix}{memory.author or 'unknown'}: {text}")
    return (
        "The following is from your previous conversations with the user; it may help to "
        "answer the user's current message.\n<PAST_CONVERSATIONS>\n"
        + "\n".join(lines)
        + "\n</PAST_CONVERSATIONS>"
    )


class PreloadMemoryTool(BaseTool):
    """Before each model call, searches memory for the user's message and adds what it finds.

    The model never calls it (it has no declaration); as in ADK, the memories arrive as a
    user content between ``<PAST_CONVERSATIONS>`` tags, placed just before the user's current
    message (for that model call only: nothing is stored).
    """

    def __init__(self) -> None:
        super().__init__(
            name="preload_memory",
            description="Shows the model memories relevant to the user's message.",
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        raise RuntimeError("preload_memory is never called by the model; it adds to requests")

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        query = content_text(tool_context.user_content)
        if not query.strip():
            return
        session = tool_context.session
        found = await memory_service_of(tool_context, "preload_memory").search_memory(
            app_name=session.app_name, user_id=session.user_id, query=query
        )
        if found.memories:
            context = types.Part(text=past_conversations(found.memories))
            llm_request.insert_user_context([types.Content(role="user", parts=[context])])


preload_memory = PreloadMemoryTool()
"""The tool to give an agent: ``Agent(..., tools=[preload_memory])``."""
preload_memory_tool = preload_memory
