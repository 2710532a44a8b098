"""Artifacts: versioned files (``google.genai.types.Part``) per app, user and session."""

from cairn.artifacts.base_artifact_service import ArtifactVersion, BaseArtifactService
from cairn.artifacts.errors import (
    ArtifactServiceMissingError,
    InvalidArtifactNameError,
    UnsupportedArtifactError,
)
from cairn.artifacts.file_artifact_service import FileArtifactService
from cairn.artifacts.in_memory_artifact_service import InMemoryArtifactService
from cairn.artifacts.session_store_artifact_service import SessionStoreArtifactService

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
