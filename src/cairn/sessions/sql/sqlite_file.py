"""Opening a SQLite store file: a new one is created whole, a damaged one is refused.

SQLite itself treats a zero-length file as an empty database and reads a
damaged one until it trips over the bad page. cairn instead creates a new
store file complete (header written) before it appears under its name, so a
zero-length store file can only be a truncated one; that, a file that is not
a SQLite database, and any page ``PRAGMA quick_check`` finds bad (once per
process and version of the file, when it is opened; only the header and schema of files over
``QUICK_CHECK_MAX_BYTES``) raise ``StoreDamagedError``, as does a
corruption error from any later statement (``damage_of``).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cairn.errors import StoreDamagedError

QUICK_CHECK_MAX_BYTES = 64 * 1024 * 1024
"""Files up to this size get ``PRAGMA quick_check`` when opened (it reads every page, about
0.3 s for 64 MB); larger ones only have their header and schema read then, and a damaged page
is reported when a statement reads it."""

_CORRUPT, _NOT_A_DATABASE = 11, 26  # SQLite's primary result codes
_checked: set[str] = set()
_lock = threading.Lock()


def prepare_sqlite_file(
    path: Path, *, busy_timeout: float = 30.0, connect: Callable[..., Any] | None = None
) -> None:
    """Create ``path`` as an empty SQLite database if it does not exist, else check it:
    ``StoreDamagedError`` if it is empty, not SQLite, or damaged. The full check runs once
    per process for each version of the file (path, inode, size and modification time).

    ``connect(path, timeout=...)`` opens the check's connection: it must come from the SQLite
    library the caller uses, since two copies of SQLite in one process that open one file
    release each other's locks (sqlite3 by default)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        _create(path)
    found = path.stat()
    if found.st_size == 0:
        raise StoreDamagedError(
            path=str(path),
            problem="the file is empty (0 bytes), so it was truncated (cairn never leaves a "
            "store file empty). If you made it empty on purpose, delete it and cairn "
            "creates a new store",
        )
    version = f"{os.path.abspath(path)}:{found.st_ino}:{found.st_size}:{found.st_mtime_ns}"
    with _lock:
        if version in _checked:
            return
        full = found.st_size <= QUICK_CHECK_MAX_BYTES
        _quick_check(path, busy_timeout, connect or sqlite3.connect, full=full)
        _checked.add(version)


def _create(path: Path) -> None:
    """Write a new database beside ``path`` and link it into place (unless another process
    just did), so no process ever sees the store file half-created."""
    fresh = path.with_name(f".{path.name}.{uuid.uuid4().hex}.new")
    try:
        connection = sqlite3.connect(fresh, isolation_level=None)
        try:
            connection.execute("VACUUM")  # writes the header page
        finally:
            connection.close()
        try:
            os.link(fresh, path)
        except FileExistsError:
            pass  # another process created it first: use theirs
        except OSError:  # a file system without hard links: let SQLite create the file
            pass
    finally:
        with contextlib.suppress(FileNotFoundError):
            fresh.unlink()


def _quick_check(
    path: Path, busy_timeout: float, connect: Callable[..., Any], *, full: bool
) -> None:
    try:
        connection = connect(path, timeout=busy_timeout)
    except Exception as exc:
        damage = damage_of(path, exc)
        if damage is None:
            raise
        raise damage from exc
    check = "PRAGMA quick_check(5)" if full else "SELECT 'ok' FROM sqlite_master LIMIT 1"
    try:
        problems = [row[0] for row in connection.execute(check)] or ["ok"]
    except Exception as exc:
        found = damage_of(path, exc)
        if found is None:
            return  # the check cannot run here (say, a table of an extension module)
        raise found from exc
    finally:
        connection.close()
    if problems != ["ok"]:
        raise StoreDamagedError(
            path=str(path), problem="PRAGMA quick_check found: " + "; ".join(problems)
        )


def damage_of(path: Path | str, exc: BaseException) -> StoreDamagedError | None:
    """The ``StoreDamagedError`` a SQLite error means (the driver's own, or SQLAlchemy's
    wrapping it), or None if it does not report a damaged or foreign file."""
    original = getattr(exc, "orig", None) or exc
    # sqlite3's, or that of a drop-in copy such as sqlean's (same names, other classes)
    if not any(kind.__name__ == "DatabaseError" for kind in type(original).__mro__):
        return None
    code = getattr(original, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (_CORRUPT, _NOT_A_DATABASE):
        return _damaged(path, original)
    text = str(original)
    if "malformed" in text or "not a database" in text:
        return _damaged(path, original)
    return None


def _damaged(path: Path | str, exc: BaseException) -> StoreDamagedError:
    return StoreDamagedError(path=str(path), problem=f"SQLite reports: {exc}")
