"""What every SQL backend builds and decides the same way, without touching a database: the
rows an append writes, the parsed events a load returns, and why a refused append was refused.

``backends`` names the statements that write these rows for each kind of database.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from typing import Any

from cairn.errors import (
    CairnError,
    DuplicateEventError,
    LeaseLostError,
    LimitExceededError,
    SessionNotFoundError,
    StaleSessionError,
)
from cairn.events.event import Event
from cairn.sessions.lease import SessionLease
from cairn.sessions.scopes import ScopedDelta
from cairn.sessions.sql.schema import APP_SCOPE, SESSION_SCOPE, STATE_KEY_LENGTH, USER_SCOPE

SessionKey = tuple[str, str, str]
"""(app_name, user_id, session_id)"""


class EventAlreadyStored(CairnError):
    """This exact event is already stored: the append is a retry and changed nothing (the
    store answers it as a success; it never reaches a caller)."""


# -- an append's rows ------------------------------------------------------------------------
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


# -- a load's events -----------------------------------------------------------------------
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


# -- a refused append ------------------------------------------------------------------------
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


def lease_lost(key: SessionKey, lease: SessionLease, current_holder: str | None) -> LeaseLostError:
    """The error for an append under ``lease`` when the session's lease is someone else's."""
    return LeaseLostError(
        app_name=key[0],
        user_id=key[1],
        session_id=key[2],
        holder=lease.holder,
        current_holder=current_holder or "",
    )


def refused_append(
    key: SessionKey,
    held_revision: int,
    event_id: str,
    raw: str,
    lease: SessionLease | None,
    found: tuple[int | None, str | None, str | None, int | None],
) -> Exception:
    """The error to raise for an append that stored nothing, from what a backend read after
    it: ``found`` is (the session's revision, the stored JSON of an event with this id, the
    lease row's holder and generation), None where there is none. ``EventAlreadyStored``
    when this exact event is already stored."""
    current, existing, holder, generation = found
    if (
        lease is not None
        and current is not None
        and (holder, generation)
        != (
            lease.holder,
            lease.generation,
        )
    ):
        return lease_lost(key, lease, holder)
    return refusal(key, held_revision, event_id, raw, current, existing) or EventAlreadyStored(
        event_id
    )
