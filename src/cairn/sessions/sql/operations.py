"""Every session-store operation as one function run inside one SQL transaction.

Written once against SQLAlchemy Core's synchronous ``Connection``: the
SQLite store runs them on its own thread, the async database store runs them
through ``AsyncConnection.run_sync``. Each function leaves the transaction to
its caller, who commits it (or rolls it back if the function raised).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import (
    Connection,
    and_,
    bindparam,
    case,
    delete,
    func,
    insert,
    or_,
    select,
    text,
    tuple_,
    union_all,
    update,
)
from sqlalchemy.sql.elements import ColumnElement

from cairn.errors import (
    DuplicateEventError,
    LeaseLostError,
    LimitExceededError,
    SessionNotFoundError,
    StaleSessionError,
)
from cairn.events.event import Event
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.lease import SessionLease
from cairn.sessions.scopes import ScopedDelta, merge_scopes
from cairn.sessions.session import Session
from cairn.sessions.sql.schema import (
    APP_SCOPE,
    SESSION_SCOPE,
    STATE_KEY_LENGTH,
    USER_SCOPE,
    events,
    leases,
    sessions,
    state,
)

SessionKey = tuple[str, str, str]
"""(app_name, user_id, session_id)"""


# -- input limits ------------------------------------------------------------------------
def state_rows(key: SessionKey, scoped: ScopedDelta) -> list[dict[str, Any]]:
    """One row per changed key, in a fixed order so concurrent writers lock rows alike."""
    app_name, user_id, session_id = key
    rows = []
    for scope, owner_user, owner_session, prefix, values in (
        (APP_SCOPE, "", "", "app:", scoped.app),
        (USER_SCOPE, user_id, "", "user:", scoped.user),
        (SESSION_SCOPE, user_id, session_id, "", scoped.session),
    ):
        for name in sorted(values):
            if len(prefix) + len(name) > STATE_KEY_LENGTH:
                raise LimitExceededError(
                    f"the state key {prefix + name[:40]!r}... is {len(prefix) + len(name)} "
                    f"characters; SQL session stores keep keys of at most {STATE_KEY_LENGTH}. "
                    "Use a shorter key. Nothing was stored."
                )
            rows.append(
                {
                    "app_name": app_name,
                    "scope": scope,
                    "user_id": owner_user,
                    "session_id": owner_session,
                    "key": name,
                    "value": values[name],
                }
            )
    return rows


def removed_rows(key: SessionKey, scoped: ScopedDelta) -> list[dict[str, Any]]:
    """The primary keys of the state rows the delta deletes, in a fixed order."""
    if not scoped.removed:
        return []
    app_name, user_id, session_id = key
    owners = {
        "app": (APP_SCOPE, "", ""),
        "user": (USER_SCOPE, user_id, ""),
        "session": (SESSION_SCOPE, user_id, session_id),
    }
    return [
        {
            "app_name": app_name,
            "scope": owners[scope][0],
            "user_id": owners[scope][1],
            "session_id": owners[scope][2],
            "key": name,
        }
        for scope, name in scoped.removed
    ]


# -- helpers -----------------------------------------------------------------------------------
def _is(table: Any, key: SessionKey) -> ColumnElement[bool]:
    return and_(table.c.app_name == key[0], table.c.user_id == key[1], table.c.session_id == key[2])


_UPSERTS: dict[tuple[str, str, tuple[str, ...]], Any] = {}


def _upsert(connection: Connection, table: Any, rows: list[dict[str, Any]], *columns: str) -> None:
    """Insert rows, or overwrite ``columns`` of rows whose primary key exists (one statement)."""
    if not rows:
        return
    cache_key = (connection.dialect.name, table.name, columns)
    statement = _UPSERTS.get(cache_key)
    if statement is None:
        statement = _UPSERTS[cache_key] = _build_upsert(connection.dialect.name, table, columns)
    connection.execute(statement, rows)


def _build_upsert(dialect: str, table: Any, columns: tuple[str, ...]) -> Any:
    keys = [c.name for c in table.primary_key.columns]
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        pg = pg_insert(table)
        statement: Any = pg.on_conflict_do_update(
            index_elements=keys, set_={c: pg.excluded[c] for c in columns}
        )
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        lite = sqlite_insert(table)
        statement = lite.on_conflict_do_update(
            index_elements=keys, set_={c: lite.excluded[c] for c in columns}
        )
    else:
        from sqlalchemy.dialects.mysql import insert as mysql_insert

        my = mysql_insert(table)
        statement = my.on_duplicate_key_update({c: my.inserted[c] for c in columns})
    return statement


# PostgreSQL: the state of many sessions, one primary-key lookup per user and per session. The
# LATERAL subqueries (kept apart by OFFSET 0) make the plan the same with or without table
# statistics; a plain `session_id IN (...)` is a filter over all of a user's rows until the
# table is analyzed.
_POSTGRES_STATES_OF = text(
    """
SELECT scope, user_id, session_id, key, value FROM cairn_state
WHERE app_name = :app AND scope = 'a'
UNION ALL
SELECT u.scope, u.user_id, u.session_id, u.key, u.value
FROM unnest(CAST(:users AS text[])) AS owner(user_id)
CROSS JOIN LATERAL (
    SELECT scope, user_id, session_id, key, value FROM cairn_state
    WHERE app_name = :app AND scope = 'u' AND user_id = owner.user_id AND session_id = ''
    OFFSET 0
) AS u
UNION ALL
SELECT s.scope, s.user_id, s.session_id, s.key, s.value
FROM unnest(CAST(:owner_users AS text[]), CAST(:owner_sessions AS text[]))
    AS owner(user_id, session_id)
CROSS JOIN LATERAL (
    SELECT scope, user_id, session_id, key, value FROM cairn_state
    WHERE app_name = :app AND scope = 's' AND user_id = owner.user_id
      AND session_id = owner.session_id
    OFFSET 0
) AS s
"""
).columns(state.c.scope, state.c.user_id, state.c.session_id, state.c.key, state.c.value)


def _merged_states(
    connection: Connection,
    app_name: str,
    owners: Sequence[tuple[str, str]],
    user_id: str | None = None,
    whole_app: bool = False,
) -> dict[tuple[str, str], dict[str, Any]]:
    """The merged state of each (user_id, session_id) in ``owners``, from one query.

    By default the query is a UNION ALL of primary-key ranges (the app's rows,
    the owners' users' rows, each user's listed sessions), so its cost does
    not depend on the planner's statistics. ``user_id`` reads all of that
    user's rows instead, ``whole_app`` all of the app's (ADK's full listing).
    """
    columns = (state.c.scope, state.c.user_id, state.c.session_id, state.c.key, state.c.value)
    in_app = state.c.app_name == app_name
    query: Any
    if whole_app:
        query = select(*columns).where(in_app)
    elif user_id is not None:
        query = select(*columns).where(
            in_app, or_(state.c.scope == APP_SCOPE, state.c.user_id == user_id)
        )
    elif connection.dialect.name == "postgresql" and len(owners) > 1:
        query = _POSTGRES_STATES_OF.bindparams(
            app=app_name,
            users=sorted({user for user, _ in owners}),
            owner_users=[user for user, _ in owners],
            owner_sessions=[session for _, session in owners],
        )
    else:
        by_user: dict[str, list[str]] = {}
        for owner_user, owner_session in owners:
            by_user.setdefault(owner_user, []).append(owner_session)
        parts = [
            select(*columns).where(in_app, state.c.scope == APP_SCOPE),
            select(*columns).where(
                in_app, state.c.scope == USER_SCOPE, state.c.user_id.in_(sorted(by_user))
            ),
            *(
                select(*columns).where(
                    in_app,
                    state.c.scope == SESSION_SCOPE,
                    state.c.user_id == owner_user,
                    state.c.session_id.in_(owned),
                )
                for owner_user, owned in by_user.items()
            ),
        ]
        query = union_all(*parts)
    app: dict[str, Any] = {}
    users: dict[str, dict[str, Any]] = {}
    sessions_state: dict[tuple[str, str], dict[str, Any]] = {}
    for scope, owner_user, owner_session, name, value in connection.execute(query):
        if scope == APP_SCOPE:
            app[name] = value
        elif scope == USER_SCOPE:
            users.setdefault(owner_user, {})[name] = value
        else:
            sessions_state.setdefault((owner_user, owner_session), {})[name] = value
    return {
        owner: merge_scopes(app, users.get(owner[0], {}), sessions_state.get(owner, {}))
        for owner in owners
    }


def _state_of(connection: Connection, key: SessionKey) -> dict[str, Any]:
    owner = (key[1], key[2])
    return _merged_states(connection, key[0], [owner])[owner]


def decode_events(raw: Iterable[str]) -> list[Event]:
    """The stored events' JSON, parsed. The cyclic garbage collector is paused meanwhile:
    parsing allocates many objects and frees none, and in a long session it would otherwise
    run full collections over the whole heap (about 40% of the parse at 10,000 events)."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return [Event.model_validate_json(text) for text in raw]
    finally:
        if paused:
            gc.enable()


def database_now(connection: Connection) -> float:
    """The database server's clock (shared by every process), in epoch seconds."""
    dialect = connection.dialect.name
    if dialect == "postgresql":
        return float(
            connection.execute(select(func.extract("epoch", func.clock_timestamp()))).scalar_one()
        )
    if dialect == "sqlite":
        return time.time()
    return float(connection.execute(select(func.unix_timestamp(func.now(6)))).scalar_one())


# -- sessions ----------------------------------------------------------------------------------
def create_session(
    connection: Connection,
    key: SessionKey,
    initial_state: dict[str, Any],
    rows: list[dict[str, Any]],
    now: float,
) -> Session:
    """Insert the session (IntegrityError if it exists) and its initial state keys."""
    connection.execute(
        insert(sessions).values(
            app_name=key[0],
            user_id=key[1],
            session_id=key[2],
            revision=0,
            create_time=now,
            update_time=now,
            initial_state=initial_state,
        )
    )
    _upsert(connection, state, rows, "value")
    return Session(
        id=key[2],
        app_name=key[0],
        user_id=key[1],
        state=_state_of(connection, key),
        last_update_time=now,
        revision=0,
    )


def import_session(
    connection: Connection,
    key: SessionKey,
    initial_state: dict[str, Any],
    rows: list[dict[str, Any]],
    event_rows: list[dict[str, Any]],
    now: float,
) -> None:
    """Insert a session that already has events (IntegrityError if the id is taken)."""
    connection.execute(
        insert(sessions).values(
            app_name=key[0],
            user_id=key[1],
            session_id=key[2],
            revision=len(event_rows),
            create_time=now,
            update_time=now,
            initial_state=initial_state,
        )
    )
    _upsert(connection, state, rows, "value")
    if event_rows:
        connection.execute(_INSERT_EVENT, event_rows)


def load_session(
    connection: Connection, key: SessionKey, config: GetSessionConfig | None
) -> Session | None:
    row = connection.execute(
        select(sessions.c.revision, sessions.c.update_time).where(_is(sessions, key))
    ).first()
    if row is None:
        return None
    query = select(events.c.event).where(_is(events, key))
    limit = config.num_recent_events if config else None
    after = config.after_timestamp if config else None
    if config is not None and config.after_revision is not None:
        query = query.where(events.c.seq > config.after_revision)
    if after is not None:
        query = query.where(events.c.timestamp >= after)
    raw: list[str]
    if limit == 0:
        raw = []
    elif limit is not None:
        raw = list(connection.scalars(query.order_by(events.c.seq.desc()).limit(limit)))
        raw.reverse()
    else:
        raw = list(connection.scalars(query.order_by(events.c.seq)))
    return Session(
        id=key[2],
        app_name=key[0],
        user_id=key[1],
        state=_state_of(connection, key),
        events=decode_events(raw),
        last_update_time=row.update_time,
        revision=row.revision,
    )


def initial_state(connection: Connection, key: SessionKey) -> dict[str, Any] | None:
    found = connection.execute(
        select(sessions.c.initial_state).where(_is(sessions, key))
    ).scalar_one_or_none()
    return None if found is None else dict(found)


def user_state(connection: Connection, app_name: str, user_id: str) -> dict[str, Any]:
    """The user's ``user:`` state, keyed without the prefix."""
    rows = connection.execute(
        select(state.c.key, state.c.value).where(
            state.c.app_name == app_name,
            state.c.scope == USER_SCOPE,
            state.c.user_id == user_id,
            state.c.session_id == "",
        )
    )
    return {str(name): value for name, value in rows}


def list_app_names(connection: Connection) -> list[str]:
    found = connection.execute(select(sessions.c.app_name).distinct().order_by(sessions.c.app_name))
    return [str(name) for name in found.scalars()]


def delete_session(connection: Connection, key: SessionKey) -> None:
    connection.execute(delete(events).where(_is(events, key)))
    connection.execute(
        delete(state).where(
            state.c.app_name == key[0],
            state.c.scope == SESSION_SCOPE,
            state.c.user_id == key[1],
            state.c.session_id == key[2],
        )
    )
    connection.execute(delete(leases).where(_is(leases, key)))
    connection.execute(delete(sessions).where(_is(sessions, key)))


def _session_filter(app_name: str, user_id: str | None) -> ColumnElement[bool]:
    if user_id is None:
        return sessions.c.app_name == app_name
    return and_(sessions.c.app_name == app_name, sessions.c.user_id == user_id)


def _session_rows(
    rows: Sequence[Any], app_name: str, states: dict[tuple[str, str], dict[str, Any]]
) -> list[Session]:
    return [
        Session(
            id=row.session_id,
            app_name=app_name,
            user_id=row.user_id,
            state=states[(row.user_id, row.session_id)],
            last_update_time=row.update_time,
            revision=row.revision,
        )
        for row in rows
    ]


_SESSION_COLUMNS = (
    sessions.c.user_id,
    sessions.c.session_id,
    sessions.c.revision,
    sessions.c.update_time,
)


def list_sessions(connection: Connection, app_name: str, user_id: str | None) -> list[Session]:
    """Every session of the user (or app), oldest update first (ADK's ``list_sessions``)."""
    rows = connection.execute(
        select(*_SESSION_COLUMNS)
        .where(_session_filter(app_name, user_id))
        .order_by(sessions.c.update_time, sessions.c.user_id, sessions.c.session_id)
    ).all()
    owners = [(row.user_id, row.session_id) for row in rows]
    states = _merged_states(connection, app_name, owners, user_id, whole_app=user_id is None)
    return _session_rows(rows, app_name, states)


def list_sessions_page(
    connection: Connection,
    app_name: str,
    user_id: str | None,
    limit: int,
    after: list[Any] | None,
) -> tuple[list[Session], bool]:
    """Newest first; ``after`` is the (update_time, user_id, session_id) of the last row seen."""
    position = (sessions.c.update_time, sessions.c.user_id, sessions.c.session_id)
    query = select(*_SESSION_COLUMNS).where(_session_filter(app_name, user_id))
    if after is not None:
        query = query.where(tuple_(*position) < tuple_(*after))
    rows = connection.execute(
        query.order_by(*(column.desc() for column in position)).limit(limit + 1)
    ).all()
    more = len(rows) > limit
    rows = rows[:limit]
    owners = [(row.user_id, row.session_id) for row in rows]
    states = _merged_states(connection, app_name, owners, None) if owners else {}
    return _session_rows(rows, app_name, states), more


def count_sessions(connection: Connection, app_name: str, user_id: str | None) -> int:
    return int(
        connection.execute(
            select(func.count()).select_from(sessions).where(_session_filter(app_name, user_id))
        ).scalar_one()
    )


def list_events(
    connection: Connection, key: SessionKey, limit: int, position: int | None, forward: bool
) -> tuple[list[Event], int | None, bool] | None:
    """A page of events in append order, the seq to continue from, and whether more exist."""
    exists = connection.execute(select(sessions.c.revision).where(_is(sessions, key))).first()
    if exists is None:
        return None
    query = select(events.c.seq, events.c.event).where(_is(events, key))
    if forward:
        if position is not None:
            query = query.where(events.c.seq > position)
        rows = list(connection.execute(query.order_by(events.c.seq).limit(limit + 1)))
    else:
        if position is not None:
            query = query.where(events.c.seq < position)
        rows = list(connection.execute(query.order_by(events.c.seq.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    if not forward:
        rows.reverse()
    if not rows:
        return [], None, False
    edge = rows[-1].seq if forward else rows[0].seq
    return decode_events(row.event for row in rows), edge, more


# -- appending --------------------------------------------------------------------------------
def _session_is(table: Any) -> ColumnElement[bool]:
    """The row of the session named by the bind parameters k_app, k_user, k_session."""
    return and_(
        table.c.app_name == bindparam("k_app"),
        table.c.user_id == bindparam("k_user"),
        table.c.session_id == bindparam("k_session"),
    )


# Built once: constructing and cache-keying a statement costs more than running it on SQLite.
_BUMP_REVISION = (
    update(sessions)
    .where(_session_is(sessions), sessions.c.revision == bindparam("held"))
    .values(
        revision=bindparam("next_revision"),
        update_time=case(
            (sessions.c.update_time < bindparam("ts"), bindparam("ts")),
            else_=sessions.c.update_time,
        ),
    )
)
_INSERT_EVENT = insert(events)
_DELETE_STATE = delete(state).where(
    state.c.app_name == bindparam("app_name"),
    state.c.scope == bindparam("scope"),
    state.c.user_id == bindparam("user_id"),
    state.c.session_id == bindparam("session_id"),
    state.c.key == bindparam("key"),
)


class EventAlreadyStored(Exception):
    """This exact event is already stored: the append is a retry and must change nothing."""


def append_event(
    connection: Connection,
    key: SessionKey,
    held_revision: int,
    held_update_time: float,
    event: Event,
    raw: str,
    rows: list[dict[str, Any]],
    removals: list[dict[str, Any]] | None = None,
    lease: SessionLease | None = None,
    *,
    lease_of: Callable[[Connection, SessionKey], tuple[str, int] | None] | None = None,
    write: AppendWriter | None = None,
) -> tuple[int, float] | None:
    """Store one event and its state rows if the caller's revision is current (and, with
    ``lease``, if that is still the session's lease: else ``LeaseLostError``).

    ``removals`` are the primary keys of state rows the event deletes. ``lease_of`` (the
    session's lease row, share-locked) and ``write`` (the revision check and the rows) are
    SQLAlchemy Core's unless a backend gives faster ones (``sqlite_direct``).

    The lock order, the same on every store (PostgreSQL runs it as one statement, in
    ``postgres_direct``; MySQL/MariaDB as one multi-statement text, in ``mysql_direct``;
    SQLite's write transaction holds the whole file): the lease row,
    share-locked, so a takeover waits for this append to commit or this append sees the
    takeover; the session row, by the conditional UPDATE that checks the revision (appends
    to one session serialize here, and nothing else is written when it is stale); the state
    rows; the event row last, so among appends that wrote one key, event ``pk`` order is
    commit order. A refused append raises (the caller's rollback undoes anything written).
    Returns the new (revision, update_time); raises ``EventAlreadyStored`` for a retry.
    """
    if lease is not None:
        current = (lease_of or current_lease)(connection, key)
        if current != (lease.holder, lease.generation):
            raise lease_lost(key, lease, current[0] if current is not None else None)
    params, event_row = append_rows(key, held_revision, event, raw)
    if not (write or write_append)(connection, params, event_row, rows, removals or []):
        explain_refused_append(connection, key, held_revision, event.id, raw)
    return held_revision + 1, max(held_update_time, event.timestamp)


AppendWriter = Callable[
    [Connection, dict[str, Any], dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]],
    bool,
]
"""(connection, revision-check parameters, event row, state rows, removals) -> stored."""


def write_append(
    connection: Connection,
    params: dict[str, Any],
    event_row: dict[str, Any],
    rows: list[dict[str, Any]],
    removals: list[dict[str, Any]],
) -> bool:
    """The revision check (locking the session row), then the state rows and the event row;
    False (nothing written) when the revision is stale."""
    if connection.execute(_BUMP_REVISION, params).rowcount != 1:
        return False
    _upsert(connection, state, rows, "value")
    if removals:
        connection.execute(_DELETE_STATE, removals)
    connection.execute(_INSERT_EVENT, event_row)
    return True


def append_rows(
    key: SessionKey, held_revision: int, event: Event, raw: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The bind parameters of an append's revision check, and its event row."""
    revision = held_revision + 1
    params = {
        "k_app": key[0],
        "k_user": key[1],
        "k_session": key[2],
        "held": held_revision,
        "next_revision": revision,
        "ts": event.timestamp,
    }
    event_row = {
        "app_name": key[0],
        "user_id": key[1],
        "session_id": key[2],
        "seq": revision,
        "event_id": event.id,
        "invocation_id": event.invocation_id,
        "timestamp": event.timestamp,
        "event": raw,
    }
    return params, event_row


def stored_event(connection: Connection, key: SessionKey, event_id: str) -> str | None:
    """The stored JSON of the event with this id, if any."""
    return connection.execute(
        select(events.c.event).where(_is(events, key), events.c.event_id == event_id)
    ).scalar_one_or_none()


def explain_refused_append(
    connection: Connection, key: SessionKey, held_revision: int, event_id: str, raw: str
) -> None:
    """Why the revision check failed: always raises."""
    current = connection.execute(
        select(sessions.c.revision).where(_is(sessions, key))
    ).scalar_one_or_none()
    existing = stored_event(connection, key, event_id)
    problem = refusal(key, held_revision, event_id, raw, current, existing)
    raise problem or EventAlreadyStored(event_id)


def refusal(
    key: SessionKey,
    held_revision: int,
    event_id: str,
    raw: str,
    current_revision: int | None,
    existing: str | None,
) -> Exception | None:
    """Why an append of event ``event_id`` (JSON ``raw``) was refused; None: it is stored.

    ``current_revision`` is the session's (None: no such session), ``existing``
    the stored JSON of an event with the same id (None: there is none).
    """
    app_name, user_id, session_id = key
    if current_revision is None:
        return SessionNotFoundError(app_name=app_name, user_id=user_id, session_id=session_id)
    if existing is not None:
        if existing == raw:
            return None
        return DuplicateEventError(
            app_name=app_name, user_id=user_id, session_id=session_id, event_id=event_id
        )
    return StaleSessionError(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        held_revision=held_revision,
        stored_revision=int(current_revision),
    )


# -- leases -------------------------------------------------------------------------------------
def lease_lost(key: SessionKey, lease: SessionLease, current_holder: str | None) -> LeaseLostError:
    """The error for an append under ``lease`` when the session's lease is someone else's."""
    return LeaseLostError(
        app_name=key[0],
        user_id=key[1],
        session_id=key[2],
        holder=lease.holder,
        current_holder=current_holder or "",
    )


def current_lease(connection: Connection, key: SessionKey) -> tuple[str, int] | None:
    """The session's lease row as (holder, generation), share-locked until the transaction
    ends (PostgreSQL, MySQL; SQLite's write transaction holds the whole database already);
    None if it has none."""
    found = connection.execute(
        select(leases.c.holder, leases.c.generation)
        .where(_is(leases, key))
        .with_for_update(read=True)
    ).first()
    return None if found is None else (str(found.holder), int(found.generation))


# A lease expires by itself, so its writes need not wait for the disk: losing one in a power cut
# frees a session early, or refuses its new holder's appends (LeaseLostError); it never lets two
# holders commit, because a durable append flushes every lease write before it. The store runs
# them as `durable=False` transactions.
def acquire_lease(
    connection: Connection,
    key: SessionKey,
    holder: str,
    ttl: float,
    generation: int | None = None,
    replacing: str | None = None,
) -> SessionLease | str:
    """Take (no ``generation``) or renew the lease; the lease got, else the current holder.

    Raises IntegrityError if another process inserted the lease row first.
    """
    now = database_now(connection)
    row = connection.execute(
        select(leases.c.holder, leases.c.expires_at, leases.c.generation)
        .where(_is(leases, key))
        .with_for_update()
    ).first()
    if generation is not None:  # a renewal: only of this holder's own acquisition
        if row is None or (row.holder, row.generation) != (holder, generation):
            return "" if row is None else str(row.holder)
        connection.execute(update(leases).where(_is(leases, key)).values(expires_at=now + ttl))
        return SessionLease(*key, holder, generation)
    if row is None:
        connection.execute(
            insert(leases).values(
                app_name=key[0],
                user_id=key[1],
                session_id=key[2],
                holder=holder,
                expires_at=now + ttl,
                generation=1,
            )
        )
        return SessionLease(*key, holder, 1)
    if not row.holder or row.expires_at <= now or row.holder == replacing:
        connection.execute(
            update(leases)
            .where(_is(leases, key))
            .values(holder=holder, expires_at=now + ttl, generation=row.generation + 1)
        )
        return SessionLease(*key, holder, int(row.generation) + 1)
    return str(row.holder)


def release_lease(
    connection: Connection, key: SessionKey, holder: str, generation: int | None = None
) -> None:
    """Free the lease if ``holder`` (at ``generation``) has it; the row keeps its generation."""
    condition = _is(leases, key) & (leases.c.holder == holder)
    if generation is not None:
        condition &= leases.c.generation == generation
    connection.execute(update(leases).where(condition).values(holder="", expires_at=0.0))
