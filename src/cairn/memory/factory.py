"""Pick a memory store from a URL or path, as the servers and the command line do."""

from __future__ import annotations

from pathlib import Path

from cairn.memory.base_memory_service import BaseMemoryService
from cairn.memory.in_memory_memory_service import InMemoryMemoryService
from cairn.memory.postgres_memory_service import PostgresMemoryService
from cairn.memory.semantic_sqlite_memory_service import SemanticSqliteMemoryService
from cairn.memory.sqlite_memory_service import SqliteMemoryService

SEMANTIC_SCHEME = "semantic+sqlite:///"


def memory_service_from_url(store: str | Path | None = None) -> BaseMemoryService:
    """None or ``memory://`` → in memory; ``postgresql://...`` → PostgreSQL full-text search;
    ``semantic+sqlite:///path`` → semantic search in a SQLite file (needs the ``semantic``
    extra); any other path or ``sqlite:///path`` → SQLite FTS5."""
    if store is None or str(store) == "memory://":
        return InMemoryMemoryService()
    text = str(store)
    if text.startswith("postgresql"):
        return PostgresMemoryService(text)
    if text.startswith(SEMANTIC_SCHEME):
        return SemanticSqliteMemoryService(text.removeprefix(SEMANTIC_SCHEME))
    if "://" in text and not text.startswith("sqlite:"):
        raise ValueError(
            f"memory store {text!r}: use memory://, a SQLite path or sqlite:///path, "
            f"{SEMANTIC_SCHEME}path, or a postgresql:// URL"
        )
    return SqliteMemoryService(text)
