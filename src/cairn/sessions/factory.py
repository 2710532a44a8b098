"""Pick a session store from a URL or path, as the command line and servers do."""

from __future__ import annotations

from pathlib import Path

from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.database_session_service import DatabaseSessionService
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.sqlite_session_service import DEFAULT_PATH, SqliteSessionService


def session_service_from_url(store: str | Path | None = None) -> BaseSessionService:
    """``memory://`` → in memory; a file path or ``sqlite:///path`` → the SQLite file store
    (``.cairn/sessions.db`` when None); any other URL → ``DatabaseSessionService``."""
    if store is None:
        return SqliteSessionService(DEFAULT_PATH)
    text = str(store)
    if text == "memory://":
        return InMemorySessionService()
    if "://" not in text or text.startswith("sqlite:"):
        return SqliteSessionService(text)
    return DatabaseSessionService(text)
