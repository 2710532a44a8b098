"""Memory: what users said in past sessions, searchable per app and user."""

from cairn.memory.base_memory_service import BaseMemoryService
from cairn.memory.embedder import BaseEmbedder
from cairn.memory.errors import EmbeddingMismatchError, SemanticSearchUnavailableError
from cairn.memory.in_memory_memory_service import InMemoryMemoryService
from cairn.memory.memory_entry import MemoryEntry, SearchMemoryResponse
from cairn.memory.minilm_embedder import MiniLmEmbedder
from cairn.memory.postgres_memory_service import PostgresMemoryService
from cairn.memory.semantic_sqlite_memory_service import SemanticSqliteMemoryService
from cairn.memory.sqlite_memory_service import SqliteMemoryService

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
