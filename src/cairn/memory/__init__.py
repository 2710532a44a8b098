"""Memory: what users said in past sessions, searchable per app and user."""

from cairn.memory.base_memory_service import BaseMemoryService
from cairn.memory.in_memory_memory_service import InMemoryMemoryService
from cairn.memory.memory_entry import MemoryEntry, SearchMemoryResponse
from cairn.memory.postgres_memory_service import PostgresMemoryService
from cairn.memory.sqlite_memory_service import SqliteMemoryService

__all__ = [
    "BaseMemoryService",
    "InMemoryMemoryService",
    "MemoryEntry",
    "PostgresMemoryService",
    "SearchMemoryResponse",
    "SqliteMemoryService",
]
