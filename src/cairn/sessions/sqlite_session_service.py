"""The embedded default store: one SQLite file, shared safely by several processes."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DatabaseError
from sqlalchemy.pool import SingletonThreadPool

from cairn.sessions.base_session_service import DEFAULT_MAX_EVENT_BYTES
from cairn.sessions.sql.engines import (
    Synchronous,
    UnsupportedStoreUrlError,
    install_sqlite_settings,
)
from cairn.sessions.sql.migrate import MigrationReport, upgrade_schema
from cairn.sessions.sql.sqlite_file import damage_of, prepare_sqlite_file
from cairn.sessions.sql.store import SqlSessionStore

T = TypeVar("T")

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
    readers never wait. Work runs on one thread per service, so the event loop
    never blocks on the disk.
    """

    def __init__(
        self,
        db_path: str | Path = DEFAULT_PATH,
        *,
        synchronous: Synchronous = "FULL",
        busy_timeout: float = 30.0,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    ) -> None:
        super().__init__(max_event_bytes=max_event_bytes)
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be 'FULL' or 'NORMAL'; got {synchronous!r}")
        self.path = sqlite_path(db_path)
        self.synchronous = synchronous
        self.busy_timeout = busy_timeout
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-sqlite")
        self._engine: Engine | None = None
        self._connection: Connection | None = None
        self._migrated = False
        self._closed = threading.Event()

    def _connect(self) -> Connection:
        """The service's one connection (created on its thread on first use)."""
        if self._connection is None:
            prepare_sqlite_file(self.path, busy_timeout=self.busy_timeout)
            self._engine = create_engine(
                f"sqlite:///{self.path}",
                poolclass=SingletonThreadPool,
                connect_args={"timeout": self.busy_timeout, "check_same_thread": False},
            )
            install_sqlite_settings(
                self._engine, self.synchronous, self.busy_timeout, begin_listener=False
            )
            self._connection = self._engine.connect()
        return self._connection

    def _in_transaction(
        self, begin: str, operation: Callable[..., T], args: tuple[Any, ...], durable: bool = True
    ) -> T:
        """Run ``operation`` in a transaction that starts with ``begin`` (sent to sqlite3 as is).

        The driver is in autocommit mode, so SQLAlchemy's begin sends nothing;
        its commit and rollback end the transaction begun here.
        """
        connection = self._connect()
        driver = connection.connection.driver_connection
        assert driver is not None
        relaxed = self.synchronous == "FULL" and not durable
        if relaxed:  # e.g. a lease: no need to wait for the disk
            driver.execute("PRAGMA synchronous = NORMAL")
        try:
            with connection.begin():
                driver.execute(begin)
                return operation(connection, *args)
        finally:
            if relaxed:
                driver.execute("PRAGMA synchronous = FULL")

    def _run(self, operation: Callable[..., T], args: tuple[Any, ...], begin: str) -> T:
        if not self._migrated:
            self._migrate_on_thread()
        return self._in_transaction(begin, operation, args, getattr(operation, "durable", True))

    def _migrate_on_thread(self) -> MigrationReport:
        report = self._in_transaction("BEGIN EXCLUSIVE", upgrade_schema, ())
        self._migrated = True
        return report

    async def migrate(self) -> MigrationReport:
        """Create or upgrade the schema now (otherwise it happens on first use)."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, self._migrate_on_thread)
        except (DatabaseError, sqlite3.DatabaseError) as exc:
            damage = damage_of(self.path, exc)
            if damage is None:
                raise
            raise damage from exc

    async def _transaction(self, operation: Callable[..., T], *args: Any, write: bool) -> T:
        loop = asyncio.get_running_loop()
        begin = "BEGIN IMMEDIATE" if write else "BEGIN"
        try:
            return await loop.run_in_executor(self._executor, self._run, operation, args, begin)
        except (DatabaseError, sqlite3.DatabaseError) as exc:  # the hot path raises sqlite3's
            damage = damage_of(self.path, exc)
            if damage is None:
                raise
            raise damage from exc

    def _close_on_thread(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
        self._migrated = False

    async def close(self) -> None:
        """Close the file (the service reopens it if used again)."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._close_on_thread)
