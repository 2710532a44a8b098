"""``load_memory``: a tool the model calls to search the user's memory of past sessions."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from cairn.memory.base_memory_service import BaseMemoryService
from cairn.memory.memory_entry import MemoryEntry
from cairn.models.llm_request import LlmRequest
from cairn.tools.function_tool import FunctionTool

MEMORY_INSTRUCTION = (
    "You have memory of your past conversations with this user. If a question needs "
    "something from an earlier conversation, call load_memory with a query."
)


def memory_service_of(tool_context: Any, tool_name: str) -> BaseMemoryService:
    """The invocation's memory service, or an error saying how to provide one."""
    service = tool_context.invocation_context.memory_service
    if not isinstance(service, BaseMemoryService):
        raise ValueError(
            f"the {tool_name} tool of agent {tool_context.agent_name!r} needs a memory service, "
            f"and the Runner has {service!r}. Pass memory_service=InMemoryMemoryService() "
            "(or SqliteMemoryService / PostgresMemoryService) to the Runner."
        )
    return service


class LoadMemoryResponse(BaseModel):
    """What ``load_memory`` answers (the model gets it as ``{"result": {"memories": [...]}}``,
    as from ADK's)."""

    memories: list[MemoryEntry] = Field(default_factory=list)


async def search_user_memory(query: str, tool_context: Any) -> LoadMemoryResponse:
    """Search the memory of past conversations with the current user.

    Args:
        query: words to look for, e.g. "cold weather preference".
    """
    session = tool_context.session
    found = await memory_service_of(tool_context, "load_memory").search_memory(
        app_name=session.app_name, user_id=session.user_id, query=query
    )
    return LoadMemoryResponse(memories=found.memories)


class LoadMemoryTool(FunctionTool):
    """Lets the model search the user's memory: ``load_memory(query)`` returns the memories.

    It also tells the model, in the instructions, that it has memory to search.
    """

    def __init__(self) -> None:
        super().__init__(search_user_memory, name="load_memory", idempotent=True)

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        await super().process_llm_request(tool_context=tool_context, llm_request=llm_request)
        llm_request.append_instructions([MEMORY_INSTRUCTION])


load_memory = LoadMemoryTool()
"""The tool to give an agent: ``Agent(..., tools=[load_memory])``."""
load_memory_tool = load_memory
