"""The interface of artifact services: versioned files per app, user and session."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any

from google.genai import types
from pydantic import BaseModel, Field

from cairn.artifacts.errors import InvalidArtifactNameError, UnsupportedArtifactError

USER_PREFIX = "user:"
"""A filename with this prefix belongs to the user, visible from every session of theirs."""


class ArtifactVersion(BaseModel):
    """What is known about one saved version of an artifact."""

    version: int
    canonical_uri: str | None = None
    custom_metadata: dict[str, Any] = Field(default_factory=dict)
    create_time: float
    mime_type: str | None = None


def is_user_scoped(filename: str, session_id: str | None) -> bool:
    """Whether ``filename`` is kept per user rather than per session."""
    return session_id is None or filename.startswith(USER_PREFIX)


def check_filename(filename: str) -> None:
    """Refuse filenames no store can keep: not a string, empty, or containing NUL."""
    if not isinstance(filename, str) or not filename:
        raise InvalidArtifactNameError(str(filename), "a filename must be a non-empty string")
    if "\x00" in filename:
        raise InvalidArtifactNameError(filename, "a filename must not contain NUL")
    if filename == USER_PREFIX:
        raise InvalidArtifactNameError(filename, "'user:' must be followed by a name")


def ensure_part(artifact: types.Part | Mapping[str, Any]) -> types.Part:
    """The artifact as a ``types.Part``: a dict in ``Part``'s shape (e.g. decoded JSON) is
    validated into one, a ``Part`` is returned as it is."""
    if isinstance(artifact, types.Part):
        return artifact
    return types.Part.model_validate(dict(artifact))


def encode_part(
    filename: str, artifact: types.Part | Mapping[str, Any]
) -> tuple[str, str | None, bytes]:
    """``(kind, mime_type, data)`` of an artifact: kind 'inline' (bytes) or 'text' (UTF-8)."""
    artifact = ensure_part(artifact)
    if artifact.inline_data is not None:
        blob = artifact.inline_data
        return "inline", blob.mime_type, bytes(blob.data or b"")
    if artifact.text is not None:
        return "text", "text/plain", artifact.text.encode("utf-8")
    raise UnsupportedArtifactError(filename)


def decode_part(kind: str, mime_type: str | None, data: bytes) -> types.Part:
    """The ``Part`` that ``encode_part`` stored."""
    if kind == "text":
        return types.Part(text=data.decode("utf-8"))
    return types.Part(inline_data=types.Blob(data=data, mime_type=mime_type))


class BaseArtifactService(abc.ABC):
    """Versioned artifacts (``google.genai.types.Part``) per app, user and session.

    Each save of a filename creates the next version, starting at 0. A filename
    starting with ``user:``, or any filename saved with ``session_id=None``, is
    kept per user and visible from every session of that user.
    """

    @abc.abstractmethod
    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        artifact: types.Part,
        session_id: str | None = None,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        """Save ``artifact`` as the next version of ``filename``; return that version."""

    @abc.abstractmethod
    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> types.Part | None:
        """The given version (default: the latest) of ``filename``; None if there is none."""

    @abc.abstractmethod
    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> list[str]:
        """The filenames visible from the session (its own and the user's), sorted."""

    @abc.abstractmethod
    async def delete_artifact(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> None:
        """Delete every version of ``filename`` (nothing happens if there is none)."""

    @abc.abstractmethod
    async def list_artifact_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[ArtifactVersion]:
        """Every version of ``filename``, oldest first."""

    async def list_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[int]:
        """The version numbers of ``filename``, ascending."""
        found = await self.list_artifact_versions(
            app_name=app_name, user_id=user_id, filename=filename, session_id=session_id
        )
        return [entry.version for entry in found]

    async def get_artifact_version(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> ArtifactVersion | None:
        """What is known about one version (default: the latest); None if there is none."""
        found = await self.list_artifact_versions(
            app_name=app_name, user_id=user_id, filename=filename, session_id=session_id
        )
        if not found:
            return None
        if version is None:
            return found[-1]
        return next((entry for entry in found if entry.version == version), None)
