"""The hot path of the MySQL/MariaDB store, sent straight to asyncmy or aiomysql.

An invocation loads its session, takes and releases a lease, and appends each event.
Through SQLAlchemy's async engine each of these is several statements, each a round trip
plus the engine's own cost in Python. Here each is one trip to the server on a driver
connection held out of the engine's pool (``direct.DirectConnections``): a load is one
statement (one snapshot), an append or a lease is one multi-statement text (both drivers
always allow them) that begins a transaction, writes, and commits. Statements after the
revision check see its outcome through a user variable (``@ok``), so a refused append
writes nothing and needs no second trip to stop. Everything else still goes through
``operations``.

The connections run in autocommit mode (each text begins its own transaction), and the
engine's isolation level (READ COMMITTED) applies; they go back to the engine's pool with
autocommit off, as the engine made them. MySQL has no per-session way to commit without
the flush, so leases use the same connections as appends.
"""

from __future__ import annotations

import contextlib
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

_DUPLICATE_KEY = 1062


def _asyncmy_refused(exc: BaseException) -> bool:
    from asyncmy.errors import MySQLError

    return isinstance(exc, MySQLError)


def _aiomysql_refused(exc: BaseException) -> bool:
    from aiomysql import MySQLError

    return isinstance(exc, MySQLError)


async def _autocommit(driver: Any) -> None:
    await driver.autocommit(True)


async def _no_autocommit(driver: Any) -> None:
    await driver.autocommit(False)


ASYNCMY = DirectDriver(
    reusable=lambda driver: driver.connected and not driver.get_transaction_status(),
    ping=lambda driver: driver.ping(reconnect=False),
    refused=_asyncmy_refused,
    prepare=_autocommit,
    restore=_no_autocommit,
)
AIOMYSQL = DirectDriver(
    reusable=lambda driver: not driver.closed and not driver.get_transaction_status(),
    ping=lambda driver: driver.ping(reconnect=False),
    refused=_aiomysql_refused,
    prepare=_autocommit,
    restore=_no_autocommit,
)


async def _run(connection: Any, text: str, params: dict[str, Any]) -> list[list[Any]]:
    """Send ``text`` (one or more statements) in one trip; the rows of each statement.

    A statement that fails ends the text there; the transaction it began is rolled back
    (a lock wait timeout undoes only its own statement), so the connection is left
    outside any transaction.
    """
    try:
        async with connection.cursor() as cursor:
            await cursor.execute(text, params)
            found = [list(await cursor.fetchall())]
            while await cursor.nextset():
                found.append(list(await cursor.fetchall()))
        return found
    except BaseException:
        with contextlib.suppress(Exception):  # a broken connection is discarded anyway
            await connection.rollback()
        raise


_KEY = "app_name = %(app)s AND user_id = %(user)s AND session_id = %(session)s"


def _key(key: SessionKey) -> dict[str, Any]:
    return {"app": key[0], "user": key[1], "session": key[2]}


# -- loading -------------------------------------------------------------------------------------
# The session row, its three scopes of state and the wanted events, in one statement (so in one
# snapshot). Each branch is a primary-key range; the events are a range of the (session, seq)
# unique index, read backwards when only the last N are wanted.
_LOAD = f"""
SELECT 0 AS part, revision AS seq, update_time AS at, NULL AS scope, NULL AS name, NULL AS body
FROM cairn_sessions WHERE {_KEY}
UNION ALL
SELECT 1, NULL, NULL, scope, `key`, value FROM cairn_state
WHERE app_name = %(app)s AND scope = 'a' AND user_id = '' AND session_id = ''
UNION ALL
SELECT 1, NULL, NULL, scope, `key`, value FROM cairn_state
WHERE app_name = %(app)s AND scope = 'u' AND user_id = %(user)s AND session_id = ''
UNION ALL
SELECT 1, NULL, NULL, scope, `key`, value FROM cairn_state
WHERE app_name = %(app)s AND scope = 's' AND user_id = %(user)s AND session_id = %(session)s
UNION ALL
SELECT 2, seq, NULL, NULL, NULL, event FROM (
    SELECT seq, event FROM cairn_events
    WHERE {_KEY}{{where}}
    ORDER BY seq{{order}}
) AS wanted
"""
_LOAD_NO_EVENTS = _LOAD[: _LOAD.rindex("UNION ALL")]


def _load_statement(config: GetSessionConfig | None, params: dict[str, Any]) -> str:
    if config is not None and config.num_recent_events == 0:
        return _LOAD_NO_EVENTS
    where, order = "", ""
    if config is not None:
        if config.after_revision is not None:
            params["after_revision"] = config.after_revision
            where += " AND seq > %(after_revision)s"
        if config.after_timestamp is not None:
            params["after_timestamp"] = config.after_timestamp
            where += " AND timestamp >= %(after_timestamp)s"
        if config.num_recent_events is not None:
            params["recent"] = config.num_recent_events
            order = " DESC LIMIT %(recent)s"
    return _LOAD.format(where=where, order=order)


async def load_session(
    connection: Any, key: SessionKey, config: GetSessionConfig | None
) -> Session | None:
    params = _key(key)
    (rows,) = await _run(connection, _load_statement(config, params), params)
    head = next((row for row in rows if row[0] == 0), None)
    if head is None:
        return None
    scopes: dict[str, dict[str, Any]] = {APP_SCOPE: {}, USER_SCOPE: {}, "s": {}}
    stored: list[tuple[int, str]] = []
    for part, seq, _at, scope, name, body in rows:
        if part == 1:
            scopes[scope][name] = json.loads(body)
        elif part == 2:
            stored.append((int(seq), body))
    stored.sort()
    return Session(
        id=key[2],
        app_name=key[0],
        user_id=key[1],
        state=merge_scopes(scopes[APP_SCOPE], scopes[USER_SCOPE], scopes["s"]),
        events=decode_events(body for _seq, body in stored),
        last_update_time=float(head[2]),
        revision=int(head[1]),
    )


# -- appending -------------------------------------------------------------------------------
# The whole append as one text, one transaction. Locks are taken in the one order every store
# uses (``backends``): the lease row (share-locked, under a lease: a takeover then
# waits for this append to commit, and an append that waited for a takeover finds the row
# changed and stores nothing), the session row (the conditional UPDATE on the revision; @ok says
# whether it matched, and nothing else is written unless it did), the state rows (upserts, then
# deletions), then the event row, so the key rows are locked before the event's pk is drawn:
# among appends that wrote one key, pk order is commit order.
_FENCE = f"""
SELECT COUNT(*) INTO @fenced FROM cairn_leases
WHERE {_KEY} AND holder = %(holder)s AND generation = %(generation)s LOCK IN SHARE MODE;
"""
_BUMP = f"""
UPDATE cairn_sessions SET revision = %(held)s + 1, update_time = GREATEST(update_time, %(ts)s)
WHERE {_KEY} AND revision = %(held)s{{fenced}};
SET @ok = ROW_COUNT();
"""
_UPSERT_STATE = """
INSERT INTO cairn_state (app_name, scope, user_id, session_id, `key`, value)
SELECT %(app)s, %(scope{i})s, %(user{i})s, %(session{i})s, %(key{i})s, %(value{i})s FROM DUAL
WHERE @ok = 1
ON DUPLICATE KEY UPDATE value = VALUES(value);
"""
_DELETE_STATE = """
DELETE FROM cairn_state
WHERE app_name = %(app)s AND scope = %(gone_scope{i})s AND user_id = %(gone_user{i})s
    AND session_id = %(gone_session{i})s AND `key` = %(gone_key{i})s AND @ok = 1;
"""
_INSERT_EVENT = """
INSERT INTO cairn_events
    (app_name, user_id, session_id, seq, event_id, invocation_id, timestamp, event)
SELECT %(app)s, %(user)s, %(session)s, %(held)s + 1, %(event_id)s, %(invocation_id)s, %(ts)s,
    %(event)s FROM DUAL
WHERE @ok = 1;
SELECT @ok;
COMMIT
"""
_BUMP_UNDER_LEASE = _FENCE + _BUMP.format(fenced=" AND @fenced = 1")
_BUMP = _BUMP.format(fenced="")
_STORED = """
SELECT s.revision, e.event, l.holder, l.generation
FROM (SELECT 1) AS one
LEFT JOIN cairn_sessions AS s
    ON s.app_name = %(app)s AND s.user_id = %(user)s AND s.session_id = %(session)s
LEFT JOIN cairn_events AS e
    ON e.app_name = %(app)s AND e.user_id = %(user)s AND e.session_id = %(session)s
    AND e.event_id = %(event_id)s
LEFT JOIN cairn_leases AS l
    ON l.app_name = %(app)s AND l.user_id = %(user)s AND l.session_id = %(session)s
"""


def _append_text(
    key: SessionKey,
    held_revision: int,
    event: Event,
    raw: str,
    rows: list[dict[str, Any]],
    removals: list[dict[str, Any]],
    lease: SessionLease | None,
) -> tuple[str, dict[str, Any]]:
    params = _key(key)
    params.update(
        held=held_revision,
        ts=event.timestamp,
        event_id=event.id,
        invocation_id=event.invocation_id,
        event=raw,
    )
    parts = ["START TRANSACTION;"]
    if lease is None:
        parts.append(_BUMP)
    else:
        params.update(holder=lease.holder, generation=lease.generation)
        parts.append(_BUMP_UNDER_LEASE)
    for i, row in enumerate(rows):
        params.update(
            {
                f"scope{i}": row["scope"],
                f"user{i}": row["user_id"],
                f"session{i}": row["session_id"],
                f"key{i}": row["key"],
                f"value{i}": encode_json_value(row["value"]),
            }
        )
        parts.append(_UPSERT_STATE.format(i=i))
    for i, gone in enumerate(removals):
        params.update(
            {
                f"gone_scope{i}": gone["scope"],
                f"gone_user{i}": gone["user_id"],
                f"gone_session{i}": gone["session_id"],
                f"gone_key{i}": gone["key"],
            }
        )
        parts.append(_DELETE_STATE.format(i=i))
    parts.append(_INSERT_EVENT)
    return "".join(parts), params


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
    text, params = _append_text(key, held_revision, event, raw, rows, removals, lease)
    try:
        found = await _run(connection, text, params)
    except Exception as exc:
        if exc.args[:1] != (_DUPLICATE_KEY,):
            raise
        # The revision matched but the id is taken (rolled back): explained below.
    else:
        if found[-2] == [(1,)]:
            return
    ((found,),) = await _run(connection, _STORED, params)
    raise refused_append(key, held_revision, event.id, raw, lease, tuple(found))


# -- leases --------------------------------------------------------------------------------------
# Take the lease: a free, released, expired or `replacing` holder's lease is overwritten with the
# next generation; someone else's live lease is left alone. The first assignment of the update
# decides (@taken) before any column changes; a new row is taken too (@taken keeps its 1). The
# row is locked by the upsert, so the SELECT after it reads what it left. Renew it: only the
# caller's own acquisition (holder and generation). The clock is the server's.
_ACQUIRE_LEASE = f"""
START TRANSACTION;
SET @now = UNIX_TIMESTAMP(NOW(6)), @taken = 1;
INSERT INTO cairn_leases (app_name, user_id, session_id, holder, expires_at, generation)
VALUES (%(app)s, %(user)s, %(session)s, %(holder)s, @now + %(ttl)s, 1)
ON DUPLICATE KEY UPDATE
    holder = IF(
        @taken := (holder = '' OR expires_at <= @now OR holder <=> %(replacing)s),
        VALUES(holder),
        holder
    ),
    expires_at = IF(@taken, VALUES(expires_at), expires_at),
    generation = IF(@taken, generation + 1, generation);
SELECT @taken, holder, generation FROM cairn_leases WHERE {_KEY};
COMMIT
"""
_RENEW_LEASE = f"""
START TRANSACTION;
UPDATE cairn_leases SET expires_at = UNIX_TIMESTAMP(NOW(6)) + %(ttl)s
WHERE {_KEY} AND holder = %(holder)s AND generation = %(generation)s;
SELECT 1, holder, generation FROM cairn_leases WHERE {_KEY};
COMMIT
"""
_RELEASE_LEASE = f"""
UPDATE cairn_leases SET holder = '', expires_at = 0
WHERE {_KEY} AND holder = %(holder)s AND (%(generation)s IS NULL OR generation = %(generation)s)
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
    params = _key(key) | {"holder": holder, "ttl": ttl}
    if generation is None:
        params["replacing"] = replacing
        found = (await _run(connection, _ACQUIRE_LEASE, params))[-2]
    else:
        params["generation"] = generation
        found = (await _run(connection, _RENEW_LEASE, params))[-2]
        if not found:  # the lease row is gone (the session was deleted)
            return ""
    ((taken, current, at),) = found
    if taken and (generation is None or (current, at) == (holder, generation)):
        return SessionLease(*key, holder, int(at))
    return str(current)


async def release_lease(
    connection: Any, key: SessionKey, holder: str, generation: int | None = None
) -> None:
    await _run(connection, _RELEASE_LEASE, _key(key) | {"holder": holder, "generation": generation})
