"""The hot path of the PostgreSQL store, sent straight to asyncpg.

An invocation loads its session, takes and releases a lease, and appends each
event. On PostgreSQL each of these is one SQL statement (one snapshot, no
transaction around it), so the cost that is left is the client's: through
SQLAlchemy's async engine a statement costs about three times its round trip
in Python. Here they run on asyncpg connections held out of the engine's own
pool (``direct.DirectConnections``). Everything else still goes through
``operations``.

Lease statements run on connections set to ``synchronous_commit = off``: a
lease is advisory and expires by itself, so losing one in a power cut only
frees a session early. Appends run on connections that wait for the disk.
"""

from __future__ import annotations

import json
from typing import Any

from cairn.events.event import Event
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.lease import SessionLease
from cairn.sessions.scopes import merge_scopes
from cairn.sessions.session import Session
from cairn.sessions.sql.direct import DirectDriver
from cairn.sessions.sql.rows import (
    SessionKey,
    decode_events,
    refused_append,
)
from cairn.sessions.sql.schema import APP_SCOPE, USER_SCOPE, encode_json_value


async def _relax(driver: Any) -> None:
    await driver.execute("SET synchronous_commit TO OFF")


def _refused(exc: BaseException) -> bool:
    import asyncpg

    return isinstance(exc, asyncpg.PostgresError)


POSTGRES = DirectDriver(
    reusable=lambda driver: not driver.is_closed() and not driver.is_in_transaction(),
    ping=lambda driver: driver.execute("SELECT 1"),
    refused=_refused,
    relax=_relax,
)
"""asyncpg connections: each statement its own transaction, so one never stays open; lease
connections commit without waiting for the disk."""


# -- loading -------------------------------------------------------------------------------------
# The session row, its three scopes of state and the wanted events, in one statement (so in one
# snapshot). Each branch is a primary-key range; the events are a range of the (session, seq)
# unique index, read backwards when only the last N are wanted.
_LOAD = """
SELECT 0 AS part, revision AS seq, update_time AS at, NULL::text AS scope, NULL::text AS key,
    NULL::text AS body
FROM cairn_sessions WHERE app_name = $1 AND user_id = $2 AND session_id = $3
UNION ALL
SELECT 1, NULL, NULL, scope, key, value FROM cairn_state
WHERE app_name = $1 AND scope = 'a' AND user_id = '' AND session_id = ''
UNION ALL
SELECT 1, NULL, NULL, scope, key, value FROM cairn_state
WHERE app_name = $1 AND scope = 'u' AND user_id = $2 AND session_id = ''
UNION ALL
SELECT 1, NULL, NULL, scope, key, value FROM cairn_state
WHERE app_name = $1 AND scope = 's' AND user_id = $2 AND session_id = $3
UNION ALL
SELECT 2, seq, NULL, NULL, NULL, event FROM (
    SELECT seq, event FROM cairn_events
    WHERE app_name = $1 AND user_id = $2 AND session_id = $3{where}
    ORDER BY seq{order}
) AS wanted
"""
_LOAD_NO_EVENTS = _LOAD[: _LOAD.rindex("UNION ALL")]


def _load_statement(config: GetSessionConfig | None) -> tuple[str, list[Any]]:
    if config is not None and config.num_recent_events == 0:
        return _LOAD_NO_EVENTS, []
    where, order = "", ""
    args: list[Any] = []
    if config is not None:
        if config.after_revision is not None:
            args.append(config.after_revision)
            where += f" AND seq > ${3 + len(args)}"
        if config.after_timestamp is not None:
            args.append(config.after_timestamp)
            where += f" AND timestamp >= ${3 + len(args)}"
        if config.num_recent_events is not None:
            args.append(config.num_recent_events)
            order = f" DESC LIMIT ${3 + len(args)}"
    return _LOAD.format(where=where, order=order), args


async def load_session(
    connection: Any, key: SessionKey, config: GetSessionConfig | None
) -> Session | None:
    statement, args = _load_statement(config)
    rows = await connection.fetch(statement, *key, *args)
    head = next((row for row in rows if row[0] == 0), None)
    if head is None:
        return None
    scopes: dict[str, dict[str, Any]] = {APP_SCOPE: {}, USER_SCOPE: {}, "s": {}}
    stored: list[tuple[int, str]] = []
    for part, seq, _at, scope, name, body in rows:
        if part == 1:
            scopes[scope][name] = json.loads(body)
        elif part == 2:
            stored.append((seq, body))
    stored.sort()
    return Session(
        id=key[2],
        app_name=key[0],
        user_id=key[1],
        state=merge_scopes(scopes[APP_SCOPE], scopes[USER_SCOPE], scopes["s"]),
        events=decode_events(body for _seq, body in stored),
        last_update_time=head[2],
        revision=head[1],
    )


# -- appending -------------------------------------------------------------------------------
# The whole append as one statement, deletes included. Locks are taken in the one order every
# store uses (``backends``): the lease row (shared, under a lease), the session row
# (`bumped`: nothing else is written unless the revision matched), the state rows (`upserted`,
# `deleted`), then the event row, whose insert reads the counts of both, so the key rows are
# locked before the event's pk is drawn: among appends that wrote one key, pk order is commit
# order.
#
# Under a lease, `fence` share-locks the session's lease row if it is still the caller's (holder
# $18, generation $19): a takeover then waits for this append to commit, and an append that
# waited for a takeover finds the row changed and stores nothing.
_APPEND = """
WITH {fence}bumped AS (
    UPDATE cairn_sessions
    SET revision = $4 + 1, update_time = GREATEST(update_time, $7)
    WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND revision = $4{fenced}
    RETURNING revision
), upserted AS (
    INSERT INTO cairn_state (app_name, scope, user_id, session_id, key, value)
    SELECT $1, row.scope, row.user_id, row.session_id, row.key, row.value
    FROM bumped, unnest($9::text[], $10::text[], $11::text[], $12::text[], $13::text[])
        AS row(scope, user_id, session_id, key, value)
    ON CONFLICT (app_name, scope, user_id, session_id, key) DO UPDATE SET value = excluded.value
    RETURNING 1
), deleted AS (
    DELETE FROM cairn_state AS kept
    USING bumped, unnest($14::text[], $15::text[], $16::text[], $17::text[])
        AS gone(scope, user_id, session_id, key)
    WHERE kept.app_name = $1 AND kept.scope = gone.scope AND kept.user_id = gone.user_id
        AND kept.session_id = gone.session_id AND kept.key = gone.key
    RETURNING 1
)
INSERT INTO cairn_events
    (app_name, user_id, session_id, seq, event_id, invocation_id, timestamp, event)
SELECT $1, $2, $3, bumped.revision, $5, $6, $7, $8
FROM bumped, (SELECT count(*) FROM upserted) AS written, (SELECT count(*) FROM deleted) AS gone
RETURNING seq
"""
_FENCE = """fence AS (
    SELECT FROM cairn_leases
    WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND holder = $18 AND generation = $19
    FOR SHARE
), """
_APPEND_UNDER_LEASE = _APPEND.format(fence=_FENCE, fenced=" AND EXISTS (SELECT FROM fence)")
_APPEND = _APPEND.format(fence="", fenced="")
_STORED = """
SELECT s.revision, e.event, l.holder, l.generation
FROM (SELECT 1) AS one
LEFT JOIN cairn_sessions AS s
    ON s.app_name = $1 AND s.user_id = $2 AND s.session_id = $3
LEFT JOIN cairn_events AS e
    ON e.app_name = $1 AND e.user_id = $2 AND e.session_id = $3 AND e.event_id = $4
LEFT JOIN cairn_leases AS l
    ON l.app_name = $1 AND l.user_id = $2 AND l.session_id = $3
"""


async def append_event(
    connection: Any,
    key: SessionKey,
    held_revision: int,
    event: Event,
    raw: str,
    rows: list[dict[str, Any]],
    removals: list[dict[str, Any]],
    lease: SessionLease | None = None,
) -> None:
    """Store the event, its state rows and its state deletions (``removals``: the deleted
    rows' keys) if ``held_revision`` is current (and ``lease`` is still the session's lease).

    Otherwise raises ``LeaseLostError``, what ``rows.refusal`` says (the session
    is gone, the id belongs to another event, the caller's revision is stale), or
    ``EventAlreadyStored`` when this exact event is already stored (a retry).
    """
    import asyncpg

    fence = () if lease is None else (lease.holder, lease.generation)
    try:
        stored = await connection.fetchval(
            _APPEND if lease is None else _APPEND_UNDER_LEASE,
            *key,
            held_revision,
            event.id,
            event.invocation_id,
            event.timestamp,
            raw,
            [row["scope"] for row in rows],
            [row["user_id"] for row in rows],
            [row["session_id"] for row in rows],
            [row["key"] for row in rows],
            [encode_json_value(row["value"]) for row in rows],
            [row["scope"] for row in removals],
            [row["user_id"] for row in removals],
            [row["session_id"] for row in removals],
            [row["key"] for row in removals],
            *fence,
        )
    except asyncpg.UniqueViolationError:
        stored = None  # the revision matched but the id is taken: explained below
    if stored is not None:
        return
    found = tuple(await connection.fetchrow(_STORED, *key, event.id))
    raise refused_append(key, held_revision, event.id, raw, lease, found)


# -- leases --------------------------------------------------------------------------------------
# Take the lease: a free, released, expired or `replacing` ($6) holder's lease is overwritten with
# the next generation; someone else's live lease is left alone, and the second branch returns its
# holder. Renew it: only the caller's own acquisition (holder and generation $6).
_ACQUIRE_LEASE = """
WITH taken AS (
    INSERT INTO cairn_leases AS lease
        (app_name, user_id, session_id, holder, expires_at, generation)
    VALUES ($1, $2, $3, $4, EXTRACT(EPOCH FROM clock_timestamp()) + $5, 1)
    ON CONFLICT (app_name, user_id, session_id) DO UPDATE
    SET holder = excluded.holder, expires_at = excluded.expires_at,
        generation = lease.generation + 1
    WHERE lease.holder = ''
       OR lease.expires_at <= EXTRACT(EPOCH FROM clock_timestamp())
       OR lease.holder = $6::text
    RETURNING generation
)
SELECT true, NULL::text, generation FROM taken
UNION ALL
SELECT false, holder, generation FROM cairn_leases
WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND NOT EXISTS (SELECT FROM taken)
"""
_RENEW_LEASE = """
WITH renewed AS (
    UPDATE cairn_leases SET expires_at = EXTRACT(EPOCH FROM clock_timestamp()) + $5
    WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND holder = $4
      AND generation = $6
    RETURNING generation
)
SELECT true, NULL::text, generation FROM renewed
UNION ALL
SELECT false, holder, generation FROM cairn_leases
WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND NOT EXISTS (SELECT FROM renewed)
"""
_RELEASE_LEASE = """
UPDATE cairn_leases SET holder = '', expires_at = 0
WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND holder = $4
  AND ($5::bigint IS NULL OR generation = $5)
"""


async def acquire_lease(
    connection: Any,
    key: SessionKey,
    holder: str,
    ttl: float,
    generation: int | None = None,
    replacing: str | None = None,
) -> SessionLease | str:
    """The lease this holder now has, else who holds it (the one algorithm of ``backends``)."""
    while True:
        if generation is None:
            row = await connection.fetchrow(_ACQUIRE_LEASE, *key, holder, ttl, replacing)
        else:
            row = await connection.fetchrow(_RENEW_LEASE, *key, holder, ttl, generation)
            if row is None:  # the lease row is gone (the session was deleted)
                return ""
        if row is not None:
            return SessionLease(*key, holder, int(row[2])) if row[0] else str(row[1])
        # Neither taken nor seen: another process inserted the row after this statement's
        # snapshot was taken (and the insert waited for it). Ask again.


async def release_lease(
    connection: Any, key: SessionKey, holder: str, generation: int | None = None
) -> None:
    await connection.execute(_RELEASE_LEASE, *key, holder, generation)
