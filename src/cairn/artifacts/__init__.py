"""Artifacts: versioned files (``google.genai.types.Part``) per app, user and session.

``SessionStoreArtifactService`` (artifacts kept in a SQL session store) is imported when
first asked for: it needs SQLAlchemy, and the in-memory and file services do not.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from cairn.artifacts.base_artifact_service import ArtifactVersion, BaseArtifactService
from cairn.artifacts.errors import (
    ArtifactServiceMissingError,
    InvalidArtifactNameError,
    UnsupportedArtifactError,
)
from cairn.artifacts.file_artifact_service import FileArtifactService
from cairn.artifacts.in_memory_artifact_service import InMemoryArtifactService

if TYPE_CHECKING:
    from cairn.artifacts.session_store_artifact_service import SessionStoreArtifactService

_LAZY = {
    "SessionStoreArtifactService": "cairn.artifacts.session_store_artifact_service",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
