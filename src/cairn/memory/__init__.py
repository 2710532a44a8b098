"""Memory: what users said in past sessions, searchable per app and user.

The services kept in a database or needing an embedding model are imported when first asked
for, so the in-memory service needs neither SQLAlchemy nor the semantic extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.lazy_names import lazy_names
from cairn.memory.base_memory_service import BaseMemoryService
from cairn.memory.embedder import BaseEmbedder
from cairn.memory.errors import EmbeddingMismatchError, SemanticSearchUnavailableError
from cairn.memory.in_memory_memory_service import InMemoryMemoryService
from cairn.memory.memory_entry import MemoryEntry, SearchMemoryResponse
from cairn.memory.sqlite_memory_service import SqliteMemoryService

if TYPE_CHECKING:
    from cairn.memory.minilm_embedder import MiniLmEmbedder
    from cairn.memory.postgres_memory_service import PostgresMemoryService
    from cairn.memory.semantic_sqlite_memory_service import SemanticSqliteMemoryService

_LAZY = {
    "MiniLmEmbedder": "cairn.memory.minilm_embedder",
    "PostgresMemoryService": "cairn.memory.postgres_memory_service",
    "SemanticSqliteMemoryService": "cairn.memory.semantic_sqlite_memory_service",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


__all__ = [
    "BaseEmbedder",
    "BaseMemoryService",
    "EmbeddingMismatchError",
    "InMemoryMemoryService",
    "MemoryEntry",
    "MiniLmEmbedder",
    "PostgresMemoryService",
    "SearchMemoryResponse",
    "SemanticSearchUnavailableError",
    "SemanticSqliteMemoryService",
    "SqliteMemoryService",
]
