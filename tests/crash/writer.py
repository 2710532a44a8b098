"""The process the crash tests kill: it opens its own store and appends events until killed.

It runs in a child process started by the ``forkserver`` context, so it shares
no database connection and no event loop with the test. It reports over a
pipe, one short message per step, each sent only after the step returned:

- ``open``: the process is running and is about to open the store;
- ``ready <revision>``: ``get_session`` (or ``create_session``) returned;
- ``try <event id>``: about to call ``append_event`` with this event;
- ``ok <event id>``: ``append_event`` returned: the event is reported as committed;
- ``stale <held> <stored>``: a ``StaleSessionError`` (the session is reloaded).

Event ids and contents are a function of (cycle, number) only (``event_for``), so the
test can check every stored event against what was sent.
"""

from __future__ import annotations

import asyncio
import dataclasses
from multiprocessing.connection import Connection
from typing import Any

from cairn.errors import SessionAlreadyExistsError, StaleSessionError
from cairn.events.event import Event
from cairn.sessions import (
    BaseSessionService,
    DatabaseSessionService,
    GetSessionConfig,
    SqliteSessionService,
)
from cairn.sessions.session import Session

APP, USER, SESSION = "crash", "writer", "s1"

INITIAL_STATE: dict[str, Any] = {
    "counter": 0,
    "origin": "initial",
    "user:profile": {"name": "writer"},
    "app:mode": "crash-test",
}

BIG_EVERY = 7
"""Every BIG_EVERY-th event carries BIG_BYTES of content and as much state (many pages)."""
BIG_BYTES = 32 * 1024


@dataclasses.dataclass(frozen=True)
class Plan:
    backend: str  # "sqlite" or "postgres"
    target: str  # the SQLite file, or the database URL
    cycle: int
    max_events: int = 5_000


def open_store(backend: str, target: str) -> BaseSessionService:
    if backend == "sqlite":
        return SqliteSessionService(target)  # synchronous="FULL", the default
    return DatabaseSessionService(target)


def event_for(cycle: int, number: int) -> Event:
    """The ``number``-th event this worker appends (its id names the cycle and number)."""
    delta: dict[str, Any] = {
        "counter": number,
        f"slot{number % 5}": f"c{cycle}-n{number}",
        "user:last": f"c{cycle}-n{number}",
        f"app:bucket{number % 3}": number,
    }
    text = f"event {number} of cycle {cycle}"
    if number % BIG_EVERY == 3:
        delta["big"] = "b" * BIG_BYTES
        text += " " + "x" * BIG_BYTES
    return Event(
        id=f"c{cycle:03d}-n{number:04d}",
        author="writer",
        invocation_id=f"inv-c{cycle}",
        message=text,
        state=delta,
    )


def numbers_of(event_id: str) -> tuple[int, int]:
    """(cycle, number) of an id made by ``event_for``."""
    cycle, number = event_id.split("-")
    return int(cycle[1:]), int(number[1:])


def run(plan: Plan, pipe: Connection) -> None:
    """The child process's entry point."""
    pipe.send_bytes(b"open")
    asyncio.run(_write(plan, pipe))


def idle() -> None:
    """Does nothing: starting it once starts the fork server before the timed cycles."""


async def _load(store: BaseSessionService) -> Session:
    # The writer needs the revision and state, not the (growing) history.
    session = await store.get_session(
        app_name=APP, user_id=USER, session_id=SESSION, config=GetSessionConfig(num_recent_events=0)
    )
    if session is None:
        try:
            session = await store.create_session(
                app_name=APP, user_id=USER, session_id=SESSION, state=dict(INITIAL_STATE)
            )
        except SessionAlreadyExistsError:  # cannot happen with one writer; reload anyway
            session = await store.get_session(app_name=APP, user_id=USER, session_id=SESSION)
            assert session is not None
    return session


async def _write(plan: Plan, pipe: Connection) -> None:
    store = open_store(plan.backend, plan.target)
    session = await _load(store)
    pipe.send_bytes(f"ready {session.revision}".encode())
    number = 0
    while number < plan.max_events:
        event = event_for(plan.cycle, number)
        pipe.send_bytes(f"try {event.id}".encode())
        try:
            await store.append_event(session, event)
        except StaleSessionError as exc:
            # The previous (killed) writer's last commit landed after we loaded: reload.
            pipe.send_bytes(f"stale {exc.held_revision} {exc.stored_revision}".encode())
            session = await _load(store)
            continue
        pipe.send_bytes(f"ok {event.id}".encode())
        number += 1
    await store.close()
