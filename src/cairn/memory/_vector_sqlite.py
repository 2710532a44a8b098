"""SQLite connections that can compare vectors: sqlite-vec loaded into them.

Python's own ``sqlite3`` is used when it can load extensions. Many builds
cannot (pyenv's by default, macOS's system Python); then the connection comes
from ``sqlean.py``, a drop-in ``sqlite3`` with its own SQLite that can.
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from cairn.memory._semantic_packages import require

_NEEDED_FOR = "SemanticSqliteMemoryService (semantic memory search)"


def check_installed() -> None:
    """Raise ``SemanticSearchUnavailableError`` unless vectors can be searched in SQLite."""
    require("sqlite_vec", package="sqlite-vec", needed_for=_NEEDED_FOR)
    if not _stdlib_loads_extensions():
        require("sqlean", package="sqlean.py", needed_for=_NEEDED_FOR)


def driver() -> ModuleType:
    """The DB-API module whose connections can load sqlite-vec."""
    if _stdlib_loads_extensions():
        return sqlite3
    import sqlean

    module: ModuleType = sqlean
    return module


def connect(path: Path, *, timeout: float) -> Any:
    """A connection to ``path`` (autocommit, usable from any one thread) with sqlite-vec loaded."""
    import sqlite_vec

    connection = driver().connect(
        str(path), timeout=timeout, isolation_level=None, check_same_thread=False
    )
    try:
        connection.enable_load_extension(True)
        sqlite_vec.load(connection)
        connection.enable_load_extension(False)
    except BaseException:
        connection.close()
        raise
    return connection


def float32_blob(vector: Sequence[float]) -> bytes:
    """A vector as sqlite-vec stores it: little-endian float32s."""
    return struct.pack(f"<{len(vector)}f", *vector)


def _stdlib_loads_extensions() -> bool:
    return hasattr(sqlite3.Connection, "enable_load_extension")
