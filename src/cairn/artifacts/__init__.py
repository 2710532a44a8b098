"""Artifacts: versioned files (``google.genai.types.Part``) per app, user and session.

``SessionStoreArtifactService`` (artifacts kept in a SQL session store) is imported when
first asked for: it needs SQLAlchemy, and the in-memory and file services do not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.artifacts.base_artifact_service import ArtifactVersion, BaseArtifactService
from cairn.artifacts.errors import (
    ArtifactServiceMissingError,
    InvalidArtifactNameError,
    UnsupportedArtifactError,
)
from cairn.artifacts.file_artifact_service import FileArtifactService
from cairn.artifacts.in_memory_artifact_service import InMemoryArtifactService
from cairn.lazy_names import lazy_names

if TYPE_CHECKING:
    from cairn.artifacts.session_store_artifact_service import SessionStoreArtifactService

_LAZY = {
    "SessionStoreArtifactService": "cairn.artifacts.session_store_artifact_service",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


__all__ = [
    "ArtifactServiceMissingError",
    "ArtifactVersion",
    "BaseArtifactService",
    "FileArtifactService",
    "InMemoryArtifactService",
    "InvalidArtifactNameError",
    "SessionStoreArtifactService",
    "UnsupportedArtifactError",
]
