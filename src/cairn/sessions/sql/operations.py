"""The session store's operations that are not on an invocation's hot path (create, import,
delete, list, count, page through events, read initial and user state), each one function
run inside one SQL transaction.

Written once, for every kind of database, against SQLAlchemy Core's synchronous
``Connection``: ``Database.transaction`` runs them (SQLite on its thread, the others through
``AsyncConnection.run_sync``), commits the transaction, or rolls it back if the function
raised. The hot operations are each backend's own (``backends``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    Connection,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    text,
    tuple_,
    union_all,
)
from sqlalchemy.sql.elements import ColumnElement

from cairn.events.event import Event
from cairn.sessions.scopes import merge_scopes
from cairn.sessions.session import Session
from cairn.sessions.sql.rows import SessionKey, decode_events
from cairn.sessions.sql.schema import (
    APP_SCOPE,
    SESSION_SCOPE,
    USER_SCOPE,
    events,
    leases,
    runs,
    session_info,
    sessions,
    spans,
    state,
)


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
    info_row: dict[str, Any] | None = None,
) -> None:
    """Insert a session that already has events (IntegrityError if the id is taken), and its
    info row (a fork's lineage) if given."""
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
        connection.execute(insert(events), event_rows)
    if info_row is not None:
        connection.execute(insert(session_info), [info_row])


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
    connection.execute(delete(session_info).where(_is(session_info, key)))
    connection.execute(delete(spans).where(_is(spans, key)))
    connection.execute(delete(runs).where(_is(runs, key)))
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


def list_invocation_events(
    connection: Connection, key: SessionKey, invocation_id: str
) -> list[Event] | None:
    """The invocation's events in append order (through the by-invocation index)."""
    where = {"key_app": key[0], "key_user": key[1], "key_session": key[2]}
    if connection.execute(_SESSION_REVISION, where).first() is None:
        return None
    rows = connection.execute(_INVOCATION_EVENTS, {**where, "invocation": invocation_id})
    return decode_events(row.event for row in rows)


def _is_bound(table: Any) -> ColumnElement[bool]:
    """``_is(table, key)`` with the key as parameters ``key_app``, ``key_user`` and
    ``key_session``: a statement built once (building one costs more than running it)."""
    return and_(
        table.c.app_name == bindparam("key_app"),
        table.c.user_id == bindparam("key_user"),
        table.c.session_id == bindparam("key_session"),
    )


_SESSION_REVISION = select(sessions.c.revision).where(_is_bound(sessions))
_INVOCATION_EVENTS = (
    select(events.c.event)
    .where(_is_bound(events), events.c.invocation_id == bindparam("invocation"))
    .order_by(events.c.seq)
)
