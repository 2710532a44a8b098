"""Artifacts as files under one root directory, one directory per version, written atomically."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from google.genai import types

from cairn.artifacts.base_artifact_service import (
    USER_PREFIX,
    ArtifactVersion,
    BaseArtifactService,
    check_filename,
    decode_part,
    encode_part,
    is_user_scoped,
)
from cairn.artifacts.errors import InvalidArtifactNameError

_META = "meta.json"
_DATA = "data"
_USER_DIR = "user"
_SESSIONS_DIR = "sessions"


def _safe_component(name: str, what: str) -> str:
    """``name`` if it is one plain path component; otherwise a typed error naming the rule."""
    if not isinstance(name, str) or not name:
        raise InvalidArtifactNameError(str(name), "it must be a non-empty string", what=what)
    if "\x00" in name:
        raise InvalidArtifactNameError(name, "it must not contain NUL", what=what)
    if "/" in name or "\\" in name:
        raise InvalidArtifactNameError(
            name, "it must not contain a path separator ('/' or '\\')", what=what
        )
    if name in (".", "..") or ".." in name:
        raise InvalidArtifactNameError(name, "it must not contain '..'", what=what)
    if os.path.isabs(name) or (len(name) > 1 and name[1] == ":"):
        raise InvalidArtifactNameError(name, "it must not be an absolute path", what=what)
    return name


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it, and rename it over ``path``."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:  # e.g. Windows cannot open directories
        return
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class FileArtifactVersion(ArtifactVersion):
    """A version of a file-backed artifact: also the filename it was saved under."""

    file_name: str


class FileArtifactService(BaseArtifactService):
    """Artifacts under ``root``: ``<app>/<user>/user/<name>/<version>/`` for user-scoped ones
    and ``<app>/<user>/sessions/<session>/<name>/<version>/`` for the others.

    Each version directory holds the bytes (``data``) and JSON metadata
    (``meta.json``), each written to a temporary file, fsynced and renamed into
    place, so a reader never sees half a version. A version number is claimed by
    creating its directory, which only one writer can do, so concurrent saves
    from several processes get distinct versions. Filenames (and app, user and
    session ids) with ``..``, a path separator, NUL, or an absolute path are
    refused with ``InvalidArtifactNameError``: nothing is ever written outside
    ``root``.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        root_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        """``root`` (or ``root_dir``, ADK's name for it): the directory to keep artifacts in;
        ``~`` is expanded."""
        if (root is None) == (root_dir is None):
            raise TypeError(
                "FileArtifactService needs the artifact directory once: pass it as "
                "FileArtifactService('artifacts') or FileArtifactService(root_dir='artifacts')."
            )
        chosen = root if root is not None else root_dir
        assert chosen is not None
        self.root = Path(chosen).expanduser().resolve()

    @property
    def root_dir(self) -> Path:
        """The artifact directory (ADK's name for ``root``)."""
        return self.root

    def _directory(
        self, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> Path:
        check_filename(filename)
        app = _safe_component(app_name, "app name")
        user = _safe_component(user_id, "user id")
        if is_user_scoped(filename, session_id):
            name = _safe_component(filename.removeprefix(USER_PREFIX), "artifact filename")
            base = self.root / app / user / _USER_DIR
        else:
            assert session_id is not None
            name = _safe_component(filename, "artifact filename")
            session = _safe_component(session_id, "session id")
            base = self.root / app / user / _SESSIONS_DIR / session
        directory = base / name
        if not directory.resolve().is_relative_to(self.root):  # a symlink pointing outside
            raise InvalidArtifactNameError(filename, "it resolves outside the artifact root")
        return directory

    @staticmethod
    def _complete_versions(directory: Path) -> list[int]:
        """Versions whose metadata is in place (a claimed but unfinished one is skipped)."""
        if not directory.is_dir():
            return []
        found = [
            int(entry.name)
            for entry in directory.iterdir()
            if entry.name.isdigit() and (entry / _META).is_file()
        ]
        return sorted(found)

    def _save(
        self,
        directory: Path,
        filename: str,
        artifact: types.Part,
        custom_metadata: dict[str, Any] | None,
    ) -> int:
        kind, mime_type, data = encode_part(filename, artifact)
        meta = json.dumps(
            {
                "format": 1,
                "kind": kind,
                "mime_type": mime_type,
                "custom_metadata": custom_metadata or {},
                "create_time": time.time(),
            }
        ).encode("utf-8")
        directory.mkdir(parents=True, exist_ok=True)
        claimed = [int(e.name) for e in directory.iterdir() if e.name.isdigit()]
        version = max(claimed, default=-1) + 1
        while True:
            try:
                (directory / str(version)).mkdir()
                break
            except FileExistsError:  # another writer claimed it first
                version += 1
        _fsync_directory(directory)
        _write_atomically(directory / str(version) / _DATA, data)
        _write_atomically(directory / str(version) / _META, meta)
        return version

    @staticmethod
    def _read_meta(directory: Path, version: int) -> dict[str, Any]:
        meta: dict[str, Any] = json.loads((directory / str(version) / _META).read_bytes())
        return meta

    def _load(self, directory: Path, version: int | None) -> types.Part | None:
        versions = self._complete_versions(directory)
        if version is None:
            if not versions:
                return None
            version = versions[-1]
        elif version not in versions:
            return None
        meta = self._read_meta(directory, version)
        data = (directory / str(version) / _DATA).read_bytes()
        return decode_part(meta["kind"], meta["mime_type"], data)

    def _keys(self, app_name: str, user_id: str, session_id: str | None) -> list[str]:
        user_root = self.root / _safe_component(app_name, "app name")
        user_root = user_root / _safe_component(user_id, "user id")
        found = [
            USER_PREFIX + entry.name
            for entry in _subdirectories(user_root / _USER_DIR)
            if self._complete_versions(entry)
        ]
        if session_id is not None:
            sessions = user_root / _SESSIONS_DIR / _safe_component(session_id, "session id")
            found += [e.name for e in _subdirectories(sessions) if self._complete_versions(e)]
        return sorted(found)

    def _versions(self, directory: Path, filename: str) -> list[ArtifactVersion]:
        result: list[ArtifactVersion] = []
        for version in self._complete_versions(directory):
            meta = self._read_meta(directory, version)
            result.append(
                FileArtifactVersion(
                    file_name=filename,
                    version=version,
                    canonical_uri=(directory / str(version) / _DATA).as_uri(),
                    custom_metadata=meta["custom_metadata"],
                    create_time=meta["create_time"],
                    mime_type=meta["mime_type"],
                )
            )
        return result

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
        directory = self._directory(app_name, user_id, session_id, filename)
        return await asyncio.to_thread(self._save, directory, filename, artifact, custom_metadata)

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> types.Part | None:
        directory = self._directory(app_name, user_id, session_id, filename)
        return await asyncio.to_thread(self._load, directory, version)

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> list[str]:
        return await asyncio.to_thread(self._keys, app_name, user_id, session_id)

    async def delete_artifact(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> None:
        directory = self._directory(app_name, user_id, session_id, filename)
        await asyncio.to_thread(shutil.rmtree, directory, True)

    async def list_artifact_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[ArtifactVersion]:
        directory = self._directory(app_name, user_id, session_id, filename)
        return await asyncio.to_thread(self._versions, directory, filename)


def _subdirectories(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return [entry for entry in directory.iterdir() if entry.is_dir()]
