"""The embedded default store: one SQLite file, shared safely by several processes."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url

from cairn.sessions.base_session_service import DEFAULT_MAX_EVENT_BYTES
from cairn.sessions.sql.database import SqliteDatabase
from cairn.sessions.sql.engines import Synchronous, UnsupportedStoreUrlError
from cairn.sessions.sql.migrate import MigrationReport
from cairn.sessions.sql.store import SqlSessionStore

DEFAULT_PATH = Path(".cairn") / "sessions.db"


def sqlite_path(db_path_or_url: str | Path) -> Path:
    """The file a path or ``sqlite:///`` URL names (``sqlite+aiosqlite://`` accepted too)."""
    text = str(db_path_or_url)
    if "://" in text:
        url = make_url(text)
        if url.get_backend_name() != "sqlite":
            raise UnsupportedStoreUrlError(
                text,
                "SqliteSessionService takes a file path or a sqlite:/// URL; use "
                "DatabaseSessionService for other databases",
            )
        text = url.database or ""
    if text in ("", ":memory:") or text.startswith("file::memory:"):
        raise ValueError(
            "SqliteSessionService needs a file (an in-memory SQLite database is private to one "
            "connection); use InMemorySessionService for a store that lives in memory"
        )
    return Path(text)


class SqliteSessionService(SqlSessionStore):
    """Sessions in one SQLite file (default ``.cairn/sessions.db``), in WAL mode.

    ``synchronous="FULL"`` (the default) makes every committed append survive
    a power loss; ``"NORMAL"`` may lose the last appends on power loss (never
    on a process crash) in exchange for faster writes. Several processes may
    use one file: writers take turns (waiting up to ``busy_timeout`` seconds),
    readers never wait. Reads, and writes that must wait for another writer,
    run on one thread per service; an append or a lease while the file is free
    runs at once on the caller's thread (a thread hop costs more than that
    transaction), so the event loop waits only for SQLite's commit, never for
    another writer. With ``"FULL"``, an append then waits (off the event loop)
    for a flush of the file's log that the appends of the moment share (group
    commit: ``cairn.sessions.sql.wal_flush``).
    """

    database: SqliteDatabase

    def __init__(
        self,
        db_path: str | Path = DEFAULT_PATH,
        *,
        synchronous: Synchronous = "FULL",
        busy_timeout: float = 30.0,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    ) -> None:
        database = SqliteDatabase(
            sqlite_path(db_path), synchronous=synchronous, busy_timeout=busy_timeout
        )
        super().__init__(database, max_event_bytes=max_event_bytes)

    @property
    def path(self) -> Path:
        assert self.database.path is not None  # sqlite_path refuses a database in memory
        return self.database.path

    @property
    def synchronous(self) -> Synchronous:
        return self.database.synchronous

    @property
    def busy_timeout(self) -> float:
        return self.database.busy_timeout

    async def migrate(self) -> MigrationReport:
        """Create or upgrade the schema now (otherwise it happens on first use)."""
        return await self.database.migrate()
