"""What a memory search returns: remembered content, who said it and when."""

from __future__ import annotations

from typing import Any

from google.genai import types
from pydantic import Field

from cairn.events._base import CamelModel


class MemoryEntry(CamelModel):
    """One remembered piece of a past conversation.

    ``timestamp`` is when it was said, as an ISO 8601 string in UTC (as in
    ADK, where it is text forwarded to the model); ``id`` is the id of the
    event it came from.
    """

    content: types.Content
    custom_metadata: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    author: str | None = None
    timestamp: str | None = None


class SearchMemoryResponse(CamelModel):
    """The memories that match a query, best match first."""

    memories: list[MemoryEntry] = Field(default_factory=list)
