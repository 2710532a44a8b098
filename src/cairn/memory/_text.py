"""Turning events into remembered rows and queries into words, shared by every store."""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
import time
import unicodedata
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from google.genai import types

from cairn.events.event import Event
from cairn.memory.memory_entry import MemoryEntry

_UNSPACED = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
)
_WORD = re.compile(rf"[{_UNSPACED}]+|(?:(?![{_UNSPACED}])\w)+", re.UNICODE)
_UNSPACED_RUN = re.compile(rf"[{_UNSPACED}]+")


def words(text: str) -> list[str]:
    """The lower-cased words of ``text`` in order, duplicates removed (no punctuation).

    Text is NFC-normalized first (a decomposed "Café" is the same word). A run of a
    script written without spaces (Chinese, Japanese, Thai, ...) is one word of its
    own, apart from the letters and digits around it: in "私はPythonで", "python" is
    a word. ``is_unspaced`` tells such runs apart; stores may match them as substrings.
    """
    text = unicodedata.normalize("NFC", text)
    return list(dict.fromkeys(match.group().lower() for match in _WORD.finditer(text)))


def is_unspaced(word: str) -> bool:
    """Whether ``word`` (from ``words``) is a run of a script written without spaces."""
    return _UNSPACED_RUN.fullmatch(word) is not None


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


def rows_of_entries(
    memories: Iterable[MemoryEntry], custom_metadata: Mapping[str, Any] | None
) -> list[MemoryRow]:
    """Explicit memories as rows: those whose content has text. An entry without an id gets
    a fresh one (so adding it twice stores it twice), one without a timestamp gets now;
    ``custom_metadata`` is under each entry's own."""
    rows = []
    for entry in memories:
        text = content_text(entry.content)
        if not text.strip():
            continue
        metadata = {**dict(custom_metadata or {}), **entry.custom_metadata}
        rows.append(
            MemoryRow(
                event_id=entry.id or f"memory-{uuid.uuid4()}",
                session_id=None,
                author=entry.author or "",
                timestamp=_seconds(entry.timestamp),
                text=text,
                content_json=entry.content.model_dump_json(exclude_none=True),
                metadata_json=json.dumps(metadata, sort_keys=True),
            )
        )
    return rows


def _seconds(timestamp: str | None) -> float:
    """An ISO 8601 timestamp (a naive one is UTC) in seconds since the epoch; now for None."""
    if timestamp is None:
        return time.time()
    try:
        moment = datetime.datetime.fromisoformat(timestamp)
    except ValueError:
        raise ValueError(
            f"a MemoryEntry's timestamp must be ISO 8601 text such as "
            f"'2026-01-31T12:00:00+00:00'; got {timestamp!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()
