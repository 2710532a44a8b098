"""Errors of the memory services: semantic search is not installed, or a file's vectors differ."""

from __future__ import annotations

from pathlib import Path

from cairn.errors import CairnError

SEMANTIC_INSTALL_HINT = "pip install 'cairn[semantic]'"


class SemanticSearchUnavailableError(CairnError, ImportError):
    """Semantic memory search needs a package (or SQLite feature) this Python does not have."""

    def __init__(self, package: str, *, needed_for: str, detail: str = "") -> None:
        self.package = package
        self.needed_for = needed_for
        reason = f" ({detail})" if detail else ""
        super().__init__(
            f"{needed_for} needs the {package!r} package, which is not installed{reason}. "
            f"Install semantic search with: {SEMANTIC_INSTALL_HINT}",
            name=package,
        )


class EmbeddingMismatchError(CairnError, ValueError):
    """A memory file holds vectors of another embedding model than the service was given.

    Vectors of different models (or dimensions) cannot be compared, so the
    service refuses the file rather than return meaningless matches.
    """

    def __init__(
        self,
        path: Path,
        *,
        stored_model: str,
        stored_dimension: int,
        model: str,
        dimension: int,
    ) -> None:
        self.path = path
        self.stored_model = stored_model
        self.stored_dimension = stored_dimension
        self.model = model
        self.dimension = dimension
        super().__init__(
            f"memory file {str(path)!r} holds {stored_dimension}-dimensional vectors of the "
            f"embedding model {stored_model!r}, but this service's embedder {model!r} makes "
            f"{dimension}-dimensional ones, which cannot be compared with them. Open the file "
            f"with an embedder of {stored_model!r} (the one it was written with), or give this "
            "embedder a new file."
        )


_WHAT_NEEDS_MEMORY = {
    "add_session_to_memory": "Cannot add session to memory",
    "add_events_to_memory": "Cannot add events to memory",
    "add_memory": "Cannot add memory",
    "search_memory": "Cannot search memory",
}
"""ADK's words for each operation, which its messages (and so porting users' checks) start with."""


class MemoryServiceMissingError(CairnError, ValueError):
    """A context was asked to search or add memory, but the Runner has no memory service."""

    def __init__(self, operation: str, agent_name: str) -> None:
        self.operation = operation
        self.agent_name = agent_name
        what = _WHAT_NEEDS_MEMORY.get(operation, "Cannot use memory")
        super().__init__(
            f"{what}: memory service is not available. "
            f"{operation}() in agent {agent_name!r} needs a memory service, and the Runner has "
            "none: give the Runner memory_service=InMemoryMemoryService() (or "
            "SqliteMemoryService / PostgresMemoryService)."
        )
