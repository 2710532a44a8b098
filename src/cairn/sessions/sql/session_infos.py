"""The SQL stores' operations on session names and lineage (``cairn_session_info``), each
one function run inside one transaction, written once for every kind of database."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, and_, insert, select, tuple_, update

from cairn.events.event import Event
from cairn.sessions.session_info import (
    FIRST_EVENTS,
    SessionInfo,
    SessionLineage,
    first_user_text,
)
from cairn.sessions.sql.rows import SessionKey
from cairn.sessions.sql.schema import events, session_info, sessions


def lineage_row(key: SessionKey, forked_from: SessionLineage) -> dict[str, Any]:
    """The info row a fork is created with."""
    return {
        "app_name": key[0],
        "user_id": key[1],
        "session_id": key[2],
        "name": None,
        "parent_session_id": forked_from.session_id,
        "parent_event_id": forked_from.event_id,
    }


def _is(table: Any, key: SessionKey) -> Any:
    return and_(table.c.app_name == key[0], table.c.user_id == key[1], table.c.session_id == key[2])


def set_name(connection: Connection, key: SessionKey, name: str | None) -> bool:
    """Name the session; False if it does not exist (nothing is written then)."""
    exists = connection.execute(select(sessions.c.revision).where(_is(sessions, key))).first()
    if exists is None:
        return False
    changed = connection.execute(
        update(session_info).where(_is(session_info, key)).values(name=name)
    )
    if changed.rowcount == 0:
        connection.execute(
            insert(session_info).values(
                app_name=key[0], user_id=key[1], session_id=key[2], name=name
            )
        )
    return True


def infos(
    connection: Connection, app_name: str, owners: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], SessionInfo]:
    """Two bounded reads: the sessions that exist with their info rows (one outer join),
    and their first ``FIRST_EVENTS`` events."""
    if not owners:
        return {}
    pairs = list(dict.fromkeys(owners))
    joined = sessions.outerjoin(
        session_info,
        and_(
            session_info.c.app_name == sessions.c.app_name,
            session_info.c.user_id == sessions.c.user_id,
            session_info.c.session_id == sessions.c.session_id,
        ),
    )
    rows = {
        (row.user_id, row.session_id): row
        for row in connection.execute(
            select(
                sessions.c.user_id,
                sessions.c.session_id,
                session_info.c.name,
                session_info.c.parent_session_id,
                session_info.c.parent_event_id,
            )
            .select_from(joined)
            .where(
                sessions.c.app_name == app_name,
                tuple_(sessions.c.user_id, sessions.c.session_id).in_(pairs),
            )
        )
    }
    first: dict[tuple[str, str], list[Event]] = {}
    found = connection.execute(
        select(events.c.user_id, events.c.session_id, events.c.event)
        .where(
            events.c.app_name == app_name,
            tuple_(events.c.user_id, events.c.session_id).in_(pairs),
            events.c.seq <= FIRST_EVENTS,
        )
        .order_by(events.c.user_id, events.c.session_id, events.c.seq)
    )
    for event_row in found:
        first.setdefault((event_row.user_id, event_row.session_id), []).append(
            Event.model_validate_json(event_row.event)
        )
    return {
        owner: SessionInfo(
            user_id=owner[0],
            session_id=owner[1],
            name=row.name,
            first_message=first_user_text(first.get(owner, [])),
            forked_from=(
                None
                if row.parent_session_id is None
                else SessionLineage(row.parent_session_id, row.parent_event_id)
            ),
        )
        for owner in pairs
        if (row := rows.get(owner)) is not None
    }
