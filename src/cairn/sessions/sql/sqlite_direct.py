"""The SQLite backend's hot operations, on the sqlite3 connection itself.

An invocation loads its session, takes and releases a lease, and appends each event. On
SQLite, SQLAlchemy's per-statement work costs several times what SQLite spends on these
statements, so these run on a ``sqlite3.Connection`` inside a transaction
``SqliteDatabase.direct`` began (and commits or rolls back). They store the same rows as
the other backends and take the write lock the way every SQLite write does: ``BEGIN
IMMEDIATE`` holds the whole file, so the lock order of ``backends`` holds trivially.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from cairn.events.event import Event
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.lease import SessionLease
from cairn.sessions.scopes import merge_scopes
from cairn.sessions.session import Session
from cairn.sessions.sql.rows import (
    SessionKey,
    decode_events,
    lease_lost,
    refused_append,
)
from cairn.sessions.sql.schema import encode_json_value

_KEY = "app_name = ? AND user_id = ? AND session_id = ?"


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
    connection: sqlite3.Connection, key: SessionKey, config: GetSessionConfig | None
) -> Session | None:
    """The session, its merged state and the events ``config`` asks for (None if absent)."""
    head = connection.execute(_HEAD, key).fetchone()
    if head is None:
        return None
    app_name, user_id, session_id = key
    scopes: dict[str, dict[str, Any]] = {"a": {}, "u": {}, "s": {}}
    for scope, name, value in connection.execute(
        _STATE, (app_name, app_name, user_id, app_name, user_id, session_id)
    ):
        scopes[scope][name] = json.loads(value)
    return Session(
        id=session_id,
        app_name=app_name,
        user_id=user_id,
        state=merge_scopes(scopes["a"], scopes["u"], scopes["s"]),
        events=decode_events(_events(connection, key, config)),
        last_update_time=head[1],
        revision=head[0],
    )


def _events(
    connection: sqlite3.Connection, key: SessionKey, config: GetSessionConfig | None
) -> list[str]:
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
        return [row[0] for row in connection.execute(sql + " ORDER BY seq", args)]
    args.append(config.num_recent_events)
    newest_first = [row[0] for row in connection.execute(sql + " ORDER BY seq DESC LIMIT ?", args)]
    newest_first.reverse()
    return newest_first


# -- appending -------------------------------------------------------------------------------
_UPSERT_STATE = """
INSERT INTO cairn_state (app_name, scope, user_id, session_id, key, value) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (app_name, scope, user_id, session_id, key) DO UPDATE SET value = excluded.value
"""
_DELETE_STATE = """
DELETE FROM cairn_state
WHERE app_name = ? AND scope = ? AND user_id = ? AND session_id = ? AND key = ?
"""
_BUMP_REVISION = f"""
UPDATE cairn_sessions SET revision = ?, update_time = max(update_time, ?)
WHERE {_KEY} AND revision = ?
"""
_INSERT_EVENT = """
INSERT INTO cairn_events
    (app_name, user_id, session_id, seq, event_id, invocation_id, timestamp, event)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
"""
_REVISION = f"SELECT revision FROM cairn_sessions WHERE {_KEY}"
_STORED_EVENT = f"SELECT event FROM cairn_events WHERE {_KEY} AND event_id = ?"


def append_event(
    connection: sqlite3.Connection,
    key: SessionKey,
    held_revision: int,
    event: Event,
    raw: str,
    rows: list[dict[str, Any]],
    removals: list[dict[str, Any]],
    lease: SessionLease | None,
) -> None:
    """Store the event, its state rows and its state deletions if ``held_revision`` is
    current (and ``lease`` is still the session's lease).

    Otherwise raises, so the caller rolls the transaction back: ``LeaseLostError``, what
    ``rows.refusal`` says (the session is gone, the id belongs to another event, the
    revision is stale), or ``EventAlreadyStored`` for a retry of this exact event.
    """
    if lease is not None:
        current = connection.execute(_LEASE, key).fetchone()
        if current is None or (current[0], current[1]) != (lease.holder, lease.generation):
            raise lease_lost(key, lease, None if current is None else str(current[0]))
    revision = held_revision + 1
    if connection.execute(
        _BUMP_REVISION, (revision, event.timestamp, *key, held_revision)
    ).rowcount:
        for row in rows:
            connection.execute(
                _UPSERT_STATE,
                (
                    row["app_name"],
                    row["scope"],
                    row["user_id"],
                    row["session_id"],
                    row["key"],
                    encode_json_value(row["value"]),
                ),
            )
        for gone in removals:
            connection.execute(
                _DELETE_STATE,
                (gone["app_name"], gone["scope"], gone["user_id"], gone["session_id"], gone["key"]),
            )
        try:
            connection.execute(
                _INSERT_EVENT,
                (*key, revision, event.id, event.invocation_id, event.timestamp, raw),
            )
            return
        except sqlite3.IntegrityError:
            pass  # the revision matched but the event id is taken: explained below
    (current,) = connection.execute(_REVISION, key).fetchone() or (None,)
    (existing,) = connection.execute(_STORED_EVENT, (*key, event.id)).fetchone() or (None,)
    raise refused_append(key, held_revision, event.id, raw, None, (current, existing, None, None))


# -- leases --------------------------------------------------------------------------------------
# The one lease algorithm (PostgreSQL's and MySQL's statements are the same upsert): a free,
# released, expired or `replacing` holder's lease is overwritten with the next generation; a
# live lease of someone else is left alone. A renewal extends only the caller's own acquisition.
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
_RELEASE_LEASE = (
    f"UPDATE cairn_leases SET holder = '', expires_at = 0 WHERE {_KEY} AND holder = ?"
    " AND (? IS NULL OR generation = ?)"
)


def acquire_lease(
    connection: sqlite3.Connection,
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
    if generation is None:
        got = connection.execute(_TAKE_LEASE, (*key, holder, now + ttl, now, replacing)).rowcount
    else:
        got = connection.execute(_RENEW_LEASE, (now + ttl, *key, holder, generation)).rowcount
    row = connection.execute(_LEASE, key).fetchone()
    if got == 1:
        return SessionLease(*key, holder, int(row[1]))
    return "" if row is None else str(row[0])


def release_lease(
    connection: sqlite3.Connection, key: SessionKey, holder: str, generation: int | None = None
) -> None:
    connection.execute(_RELEASE_LEASE, (*key, holder, generation, generation))
