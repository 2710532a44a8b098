"""Turning events into remembered rows and queries into words, shared by every store."""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from google.genai import types

from cairn.events.event import Event
from cairn.memory.memory_entry import MemoryEntry

_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    """The lower-cased words of ``text`` in order, duplicates removed (no punctuation)."""
    return list(dict.fromkeys(match.group().lower() for match in _WORD.finditer(text)))


def content_text(content: types.Content | None) -> str:
    """The text parts of ``content`` joined by newlines ('' when it has none)."""
    if content is None:
        return ""
    return "\n".join(part.text for part in content.parts or [] if part.text and not part.thought)


def iso_timestamp(seconds: float) -> str:
    """Seconds since the epoch as an ISO 8601 string in UTC."""
    return datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC).isoformat()


@dataclasses.dataclass(frozen=True)
class MemoryRow:
    """One event as a store keeps it: its text is what searches match."""

    event_id: str
    session_id: str | None
    author: str
    timestamp: float
    text: str
    content_json: str
    metadata_json: str

    def entry(self) -> MemoryEntry:
        return entry_from_stored(
            self.event_id, self.author, self.timestamp, self.content_json, self.metadata_json
        )


def entry_from_stored(
    event_id: str, author: str | None, timestamp: float, content_json: str, metadata_json: str
) -> MemoryEntry:
    return MemoryEntry(
        content=types.Content.model_validate_json(content_json),
        custom_metadata=json.loads(metadata_json),
        id=event_id,
        author=author or None,
        timestamp=iso_timestamp(timestamp),
    )


def rows_of(
    events: Iterable[Event],
    session_id: str | None,
    custom_metadata: Mapping[str, Any] | None,
) -> list[MemoryRow]:
    """The events worth remembering: those whose content has text (not partial ones)."""
    metadata_json = json.dumps(dict(custom_metadata or {}), sort_keys=True)
    rows = []
    for event in events:
        text = content_text(event.content)
        if event.partial or not text.strip():
            continue
        assert event.content is not None
        rows.append(
            MemoryRow(
                event_id=event.id,
                session_id=session_id,
                author=event.author,
                timestamp=event.timestamp,
                text=text,
                content_json=event.content.model_dump_json(exclude_none=True),
                metadata_json=metadata_json,
            )
        )
    return rows
