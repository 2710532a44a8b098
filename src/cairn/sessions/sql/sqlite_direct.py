"""The hot path of the embedded SQLite store, sent straight to the sqlite3 module.

An invocation loads its session, takes and releases a lease, and appends each
event. On SQLite, SQLAlchemy's per-statement work costs several times what
SQLite itself spends on these statements, so the SQLite backend (``backends``) runs
these versions of ``operations``' on the sqlite3 connection of ``SqliteDatabase``. They
run inside the transaction the database began, exactly like the Core versions, and store
the same rows.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from cairn.events.event import Event
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.lease import SessionLease
from cairn.sessions.scopes import merge_scopes
from cairn.sessions.session import Session
from cairn.sessions.sql.operations import SessionKey
from cairn.sessions.sql.schema import encode_json_value

_KEY = "app_name = ? AND user_id = ? AND session_id = ?"


def _driver(connection: Connection) -> sqlite3.Connection:
    driver = connection.connection.driver_connection
    assert isinstance(driver, sqlite3.Connection)
    return driver


# -- loading -------------------------------------------------------------------------------------
_HEAD = f"SELECT revision, update_time FROM cairn_sessions WHERE {_KEY}"
_STATE = """
SELECT scope, key, value FROM cairn_state
WHERE app_name = ? AND scope = 'a' AND user_id = '' AND session_id = ''
UNION ALL
SELECT scope, key, value FROM cairn_state
WHERE app_name = ? AND scope = 'u' AND user_id = ? AND session_id = ''
UNION ALL
SELECT scope, key, value FROM cairn_state
WHERE app_name = ? AND scope = 's' AND user_id = ? AND session_id = ?
"""


def load_session(
    connection: Connection, key: SessionKey, config: GetSessionConfig | None
) -> Session | None:
    """The session, its merged state and the events ``config`` asks for (None if absent)."""
    cursor = _driver(connection).cursor()
    try:
        head = cursor.execute(_HEAD, key).fetchone()
        if head is None:
            return None
        app_name, user_id, session_id = key
        scopes: dict[str, dict[str, Any]] = {"a": {}, "u": {}, "s": {}}
        for scope, name, value in cursor.execute(
            _STATE, (app_name, app_name, user_id, app_name, user_id, session_id)
        ):
            scopes[scope][name] = json.loads(value)
        raw = _events(cursor, key, config)
    finally:
        cursor.close()
    return Session(
        id=session_id,
        app_name=app_name,
        user_id=user_id,
        state=merge_scopes(scopes["a"], scopes["u"], scopes["s"]),
        events=[Event.model_validate_json(text) for text in raw],
        last_update_time=head[1],
        revision=head[0],
    )


def _events(cursor: sqlite3.Cursor, key: SessionKey, config: GetSessionConfig | None) -> list[str]:
    if config is not None and config.num_recent_events == 0:
        return []
    sql = f"SELECT event FROM cairn_events WHERE {_KEY}"
    args: list[Any] = list(key)
    if config is not None and config.after_revision is not None:
        sql += " AND seq > ?"
        args.append(config.after_revision)
    if config is not None and config.after_timestamp is not None:
        sql += " AND timestamp >= ?"
        args.append(config.after_timestamp)
    if config is None or config.num_recent_events is None:
        return [row[0] for row in cursor.execute(sql + " ORDER BY seq", args)]
    args.append(config.num_recent_events)
    newest_first = [row[0] for row in cursor.execute(sql + " ORDER BY seq DESC LIMIT ?", args)]
    newest_first.reverse()
    return newest_first


# -- appending -------------------------------------------------------------------------------
_UPSERT_STATE = """
INSERT INTO cairn_state (app_name, scope, user_id, session_id, key, value)
VALUES (:app_name, :scope, :user_id, :session_id, :key, :value)
ON CONFLICT (app_name, scope, user_id, session_id, key) DO UPDATE SET value = excluded.value
"""
_DELETE_STATE = """
DELETE FROM cairn_state
WHERE app_name = :app_name AND scope = :scope AND user_id = :user_id
  AND session_id = :session_id AND key = :key
"""
_BUMP_REVISION = """
UPDATE cairn_sessions
SET revision = :next_revision,
    update_time = CASE WHEN update_time < :ts THEN :ts ELSE update_time END
WHERE app_name = :k_app AND user_id = :k_user AND session_id = :k_session AND revision = :held
"""
_INSERT_EVENT = """
INSERT INTO cairn_events
    (app_name, user_id, session_id, seq, event_id, invocation_id, timestamp, event)
VALUES (:app_name, :user_id, :session_id, :seq, :event_id, :invocation_id, :timestamp, :event)
"""


def write_append(
    connection: Connection,
    params: dict[str, Any],
    event_row: dict[str, Any],
    rows: list[dict[str, Any]],
    removals: list[dict[str, Any]],
) -> bool:
    """The revision check, the state rows and the event row (in ``operations.append_event``'s
    order); False if the revision is stale. A taken event id raises SQLAlchemy's
    ``IntegrityError``, as the Core version would.
    """
    cursor = _driver(connection).cursor()
    try:
        cursor.execute(_BUMP_REVISION, params)
        if cursor.rowcount != 1:
            return False
        if rows:
            cursor.executemany(
                _UPSERT_STATE, [{**row, "value": encode_json_value(row["value"])} for row in rows]
            )
        if removals:
            cursor.executemany(_DELETE_STATE, removals)
        cursor.execute(_INSERT_EVENT, event_row)
        return True
    except sqlite3.IntegrityError as exc:
        raise IntegrityError(_INSERT_EVENT, event_row, exc) from exc
    finally:
        cursor.close()


# -- leases --------------------------------------------------------------------------------------
_TAKE_LEASE = """
INSERT INTO cairn_leases (app_name, user_id, session_id, holder, expires_at, generation)
VALUES (?, ?, ?, ?, ?, 1)
ON CONFLICT (app_name, user_id, session_id) DO UPDATE
SET holder = excluded.holder, expires_at = excluded.expires_at, generation = generation + 1
WHERE holder = '' OR expires_at <= ? OR holder = ?
"""
_RENEW_LEASE = (
    f"UPDATE cairn_leases SET expires_at = ? WHERE {_KEY} AND holder = ? AND generation = ?"
)
_LEASE = f"SELECT holder, generation FROM cairn_leases WHERE {_KEY}"


def current_lease(connection: Connection, key: SessionKey) -> tuple[str, int] | None:
    """The session's lease row as (holder, generation); None if it has none."""
    row = _driver(connection).execute(_LEASE, key).fetchone()
    return None if row is None else (str(row[0]), int(row[1]))


def acquire_lease(
    connection: Connection,
    key: SessionKey,
    holder: str,
    ttl: float,
    generation: int | None = None,
    replacing: str | None = None,
) -> SessionLease | str:
    """Take a free, expired or ``replacing``'s lease (a new generation), or renew this
    holder's at ``generation``; else return who holds it. (SQLite's clock is the host's:
    the processes sharing a file share the host.)"""
    now = time.time()
    cursor = _driver(connection).cursor()
    try:
        if generation is None:
            cursor.execute(_TAKE_LEASE, (*key, holder, now + ttl, now, replacing))
        else:
            cursor.execute(_RENEW_LEASE, (now + ttl, *key, holder, generation))
        got = cursor.rowcount == 1
        row = cursor.execute(_LEASE, key).fetchone()
    finally:
        cursor.close()
    if got:
        return SessionLease(*key, holder, int(row[1]))
    return "" if row is None else str(row[0])


def release_lease(
    connection: Connection, key: SessionKey, holder: str, generation: int | None = None
) -> None:
    _driver(connection).execute(
        f"UPDATE cairn_leases SET holder = '', expires_at = 0 WHERE {_KEY} AND holder = ?"
        " AND (? IS NULL OR generation = ?)",
        (*key, holder, generation, generation),
    )
