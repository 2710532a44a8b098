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
    """Three bounded reads: which sessions exist, their info rows, and their first events."""
    if not owners:
        return {}
    pairs = list(dict.fromkeys(owners))

    def among(table: Any) -> Any:
        return and_(
            table.c.app_name == app_name, tuple_(table.c.user_id, table.c.session_id).in_(pairs)
        )

    existing = {
        (row.user_id, row.session_id)
        for row in connection.execute(
            select(sessions.c.user_id, sessions.c.session_id).where(among(sessions))
        )
    }
    rows = {
        (row.user_id, row.session_id): row
        for row in connection.execute(select(session_info).where(among(session_info)))
    }
    first: dict[tuple[str, str], list[Event]] = {}
    found = connection.execute(
        select(events.c.user_id, events.c.session_id, events.c.event)
        .where(among(events), events.c.seq <= FIRST_EVENTS)
        .order_by(events.c.user_id, events.c.session_id, events.c.seq)
    )
    for event_row in found:
        first.setdefault((event_row.user_id, event_row.session_id), []).append(
            Event.model_validate_json(event_row.event)
        )
    result = {}
    for owner in pairs:
        if owner not in existing:
            continue
        row = rows.get(owner)
        parent = (
            SessionLineage(row.parent_session_id, row.parent_event_id)
            if row is not None and row.parent_session_id is not None
            else None
        )
        result[owner] = SessionInfo(
            user_id=owner[0],
            session_id=owner[1],
            name=row.name if row is not None else None,
            first_message=first_user_text(first.get(owner, [])),
            forked_from=parent,
        )
    return result
