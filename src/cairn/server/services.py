"""The stores one server process shares between all its apps: opened once, closed at shutdown."""

from __future__ import annotations

import dataclasses

from cairn.artifacts.base_artifact_service import BaseArtifactService
from cairn.artifacts.file_artifact_service import FileArtifactService
from cairn.artifacts.in_memory_artifact_service import InMemoryArtifactService
from cairn.artifacts.session_store_artifact_service import SessionStoreArtifactService
from cairn.memory.base_memory_service import BaseMemoryService
from cairn.memory.factory import memory_service_from_url
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.factory import session_service_from_url
from cairn.sessions.sql.store import SqlSessionStore


@dataclasses.dataclass
class Services:
    """The session store, the artifact service and the memory service of this process."""

    session_service: BaseSessionService
    artifact_service: BaseArtifactService
    memory_service: BaseMemoryService

    @classmethod
    def open(
        cls, store: str | None, artifact_store: str | None, memory_store: str | None = None
    ) -> Services:
        """Stores as ``ServerSettings`` names them (connections are made on first use)."""
        sessions = session_service_from_url(store)
        artifacts: BaseArtifactService
        if artifact_store == "memory://":
            artifacts = InMemoryArtifactService()
        elif artifact_store is not None:
            artifacts = FileArtifactService(artifact_store)
        elif isinstance(sessions, SqlSessionStore):
            artifacts = SessionStoreArtifactService(sessions)
        else:
            artifacts = InMemoryArtifactService()
        return cls(
            session_service=sessions,
            artifact_service=artifacts,
            memory_service=memory_service_from_url(memory_store),
        )

    async def close(self) -> None:
        await self.memory_service.close()
        await self.session_service.close()
