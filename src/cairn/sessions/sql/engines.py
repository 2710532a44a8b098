"""Store URLs, SQLite connection settings, and what a database error means."""

from __future__ import annotations

import time
from typing import Any, Literal

from sqlalchemy import Engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from cairn.errors import CairnError

Synchronous = Literal["FULL", "NORMAL"]

ASYNC_DRIVERS = {
    "postgresql+asyncpg": "PostgreSQL via asyncpg (pip install 'cairn[postgres]')",
    "mysql+asyncmy": "MySQL or MariaDB via asyncmy (pip install 'cairn[mysql]')",
    "mysql+aiomysql": "MySQL or MariaDB via aiomysql (pip install 'cairn[aiomysql]')",
    "sqlite+aiosqlite": "SQLite via aiosqlite (pip install 'cairn[aiosqlite]')",
}
_ALIASES = {
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
    "mysql": "mysql+asyncmy",
    "mariadb": "mysql+asyncmy",
    "mariadb+asyncmy": "mysql+asyncmy",
    "mariadb+aiomysql": "mysql+aiomysql",
    "sqlite": "sqlite+aiosqlite",
}


class UnsupportedStoreUrlError(CairnError, ValueError):
    """A store URL whose scheme cairn has no driver for."""

    def __init__(self, url: str, reason: str = "") -> None:
        supported = "\n".join(f"  {scheme}://...  {what}" for scheme, what in ASYNC_DRIVERS.items())
        scheme = url.split("://", 1)[0] if "://" in url else url
        super().__init__(
            f"cannot use the store URL scheme {scheme!r}{': ' + reason if reason else ''}. "
            f"Supported schemes:\n{supported}\n(postgresql://, mysql://, mariadb:// and "
            "sqlite:// pick the first driver of their kind; a plain file path means SQLite.)"
        )


def async_url(url: str | URL) -> URL:
    """The URL with an async driver, or UnsupportedStoreUrlError listing what is supported."""
    text = url.render_as_string(hide_password=False) if isinstance(url, URL) else url
    try:
        parsed = make_url(text)
    except ArgumentError as exc:
        raise UnsupportedStoreUrlError(text, "it is not a database URL") from exc
    scheme = _ALIASES.get(parsed.drivername, parsed.drivername)
    if scheme not in ASYNC_DRIVERS:
        raise UnsupportedStoreUrlError(text)
    return parsed.set(drivername=scheme)


def describe(url: URL) -> str:
    """Where a URL points, for messages: never the password."""
    backend = url.get_backend_name()
    if backend == "sqlite":
        return f"SQLite file {url.database or ':memory:'}"
    host = url.host or "localhost"
    port: int | str = url.port or {"postgresql": 5432, "mysql": 3306}.get(backend) or "?"
    user = f" as user {url.username!r}" if url.username else ""
    return f"{backend} at {host}:{port} (database {url.database!r}{user})"


def install_sqlite_settings(engine: Engine, synchronous: Synchronous, busy_timeout: float) -> None:
    """WAL, the chosen durability and a busy timeout on each connection, with the driver's
    own implicit transactions turned off: ``SqliteDatabase`` sends its own ``BEGIN``
    (``IMMEDIATE`` for writers, so a writer waits for the write lock up front and never
    fails half-way on a lock upgrade; ``EXCLUSIVE`` for migrations)."""

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        _set_wal(cursor, busy_timeout)
        cursor.execute(f"PRAGMA synchronous = {synchronous}")
        cursor.close()


def _set_wal(cursor: Any, busy_timeout: float) -> None:
    """Switch to WAL. Changing the journal mode does not wait on the busy handler when
    another connection is opening the same new file at that moment, so retry until
    ``busy_timeout`` runs out."""
    deadline = time.monotonic() + busy_timeout
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except Exception as exc:  # sqlite3.OperationalError, under any driver's name
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.005)


def _driver_error_code(exc: DBAPIError) -> Any:
    original = exc.orig
    for attribute in ("sqlstate", "pgcode"):
        code = getattr(original, attribute, None)
        if code:
            return code
    args = getattr(original, "args", ())
    return args[0] if args else None


def is_retryable(exc: BaseException) -> bool:
    """A deadlock or serialization failure: the transaction was rolled back and may be rerun."""
    if not isinstance(exc, DBAPIError):
        return False
    return _driver_error_code(exc) in {"40P01", "40001", 1213, 1205}


_GONE_SQLSTATES = {"57P01", "57P02", "57P03", "53300", "28P01"}
"""PostgreSQL: terminated by an administrator, server crash, server starting or stopping, too many
connections, wrong password (and every code of class 08, connection exception)."""
_GONE_MYSQL_CODES = {1040, 1045, 1053, 1698, 1927, 2002, 2003, 2006, 2013, 2055, 4031}
"""MySQL/MariaDB: too many connections, access denied, shutdown in progress, connection killed,
cannot connect, server gone away, lost connection, disconnected for inactivity."""
_MISSING = {
    "3D000": "database",  # PostgreSQL: invalid_catalog_name
    "28000": "role",  # PostgreSQL: invalid_authorization_specification
    1049: "database",  # MySQL: unknown database
}
_DISCONNECT_WORDS = ("connection", "closed", "terminat", "refused", "lost", "gone away", "reset")


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc``, the driver's error SQLAlchemy wrapped, and what each was raised from."""
    found: list[BaseException] = []
    pending: list[BaseException | None] = [exc]
    while pending:
        cause = pending.pop()
        if cause is None or any(cause is seen for seen in found):
            continue
        found.append(cause)
        orig = getattr(cause, "orig", None)
        pending += [cause.__cause__, orig if isinstance(orig, BaseException) else None]
    return found


def _error_codes(cause: BaseException) -> set[Any]:
    """The SQLSTATE and the driver's own error number, whichever the error carries."""
    codes = {getattr(cause, attribute, None) for attribute in ("sqlstate", "pgcode")}
    args = getattr(cause, "args", ())
    if args and isinstance(args[0], int):
        codes.add(args[0])
    codes.discard(None)
    return codes


def missing_part(exc: BaseException) -> str | None:
    """``"database"`` or ``"role"`` when the server refused the connection because the URL's
    database or user does not exist there; else None."""
    for cause in _causes(exc):
        for code in _error_codes(cause):
            if code in _MISSING:
                return _MISSING[code]
    return None


def is_unavailable(exc: BaseException) -> bool:
    """The store cannot answer: the server could not be reached or refused the connection, or
    the connection broke under the statement (backend terminated, server gone, the driver lost
    track of it), or the pool ran out. The statement may not have run; nothing was half-done,
    since a transaction that did not commit is rolled back by the server."""
    for cause in _causes(exc):
        if isinstance(cause, OSError | PoolTimeoutError):
            return True
        if isinstance(cause, DBAPIError) and cause.connection_invalidated:
            return True
        for code in _error_codes(cause):
            if isinstance(code, str) and (code.startswith("08") or code in _GONE_SQLSTATES):
                return True
            if code in _GONE_MYSQL_CODES or code in _MISSING:
                return True
        kind = type(cause)
        if kind.__module__.startswith("asyncpg") and any(
            base.__name__ in {"InterfaceError", "InternalClientError"} for base in kind.__mro__
        ):
            return True  # the driver's own view of the connection is broken
        if isinstance(cause, DBAPIError):
            continue  # its text holds the statement; the driver's error below is checked
        if kind.__name__ in {"InterfaceError", "OperationalError"} and any(
            word in str(cause).lower() for word in _DISCONNECT_WORDS
        ):
            return True
    return False


IDLE_PING_AFTER = 2.0
"""Seconds a pooled connection may sit unused before it is pinged when checked out."""


def ping_idle_connections(engine: Engine, idle_after: float = IDLE_PING_AFTER) -> None:
    """Pre-ping, but only connections that sat in the pool for ``idle_after`` seconds.

    A connection in steady use needs no ping (and a ping is a round trip per
    call); one that sat idle may have been cut by a server restart or a
    firewall, and is tested first. A dead one is replaced transparently. The
    ping is the dialect's own, which leaves no transaction open (a plain
    ``SELECT 1`` through asyncpg's adapter begins one, and a connection then
    used directly would run every later statement inside it, never committed).
    """
    dialect = engine.dialect

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info["cairn_checked_in"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _on_checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        checked_in = record.info.get("cairn_checked_in")
        if checked_in is None or time.monotonic() - checked_in < idle_after:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except Exception as exc:
            raise DisconnectionError(f"idle pooled connection is dead: {exc}") from exc


def refuse_connections_in_transaction(engine: Engine) -> None:
    """A pooled asyncpg connection that is still inside a transaction is never handed out.

    cairn's own work never leaves one so; this is the last line of defence: a connection
    that would run the next statement inside someone else's transaction (holding its locks,
    seeing its old snapshot) is closed and replaced instead.
    """

    @event.listens_for(engine, "checkout")
    def _on_checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        driver = dbapi_connection.driver_connection
        if driver.is_closed() or driver.is_in_transaction():
            raise DisconnectionError("pooled connection was left inside a transaction")
