"""Check that stored state equals the fold of the log, and report every difference.

A session's own (session-scope) state must be exactly its initial state with
each of its events' changes applied in order — rewinds and forks included.
``app:`` and ``user:`` state is shared by many sessions whose logs interleave,
so a whole user (or app) is checked at once: every stored value must be one
that some event or initial state wrote to that key, and every key written
must be stored unless some event removed it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from cairn.errors import SessionNotFoundError
from cairn.events.event import Event
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.fold import session_state_of
from cairn.sessions.scopes import event_scopes, split_by_scope

Scope = Literal["session", "user", "app"]
Kind = Literal["missing", "unexpected", "different"]
_PAGE = 1000
_NO_EVENTS = GetSessionConfig(num_recent_events=0)


@dataclass(frozen=True)
class StateDifference:
    """One key whose stored value is not what the log says it should be."""

    app_name: str
    user_id: str | None
    """None for an ``app:`` key."""
    session_id: str | None
    """None for an ``app:`` or ``user:`` key."""
    scope: Scope
    key: str
    """The key as the session sees it (``user:``/``app:`` prefix included)."""
    kind: Kind
    """missing: the log sets it, the store lacks it; unexpected: stored, never written (or
    removed); different: stored with another value."""
    stored: Any = None
    expected: Any = None

    def describe(self) -> str:
        where = f"app {self.app_name!r}"
        if self.user_id is not None:
            where += f", user {self.user_id!r}"
        if self.session_id is not None:
            where += f", session {self.session_id!r}"
        if self.kind == "missing":
            what = f"is missing; the log sets it to {self.expected!r}"
        elif self.kind == "unexpected":
            what = f"is stored as {self.stored!r}, but the log never sets it (or removed it)"
        elif self.scope == "session":
            what = f"is stored as {self.stored!r}; the fold of the log gives {self.expected!r}"
        else:
            what = (
                f"is stored as {self.stored!r}, a value no event or initial state wrote "
                f"(they wrote {self.expected!r})"
            )
        return f"{where}: {self.scope} key {self.key!r} {what}"


@dataclass
class VerifyReport:
    """What ``verify_store`` checked and every difference it found."""

    sessions_checked: int = 0
    users_checked: int = 0
    apps_checked: int = 0
    differences: list[StateDifference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences


@dataclass
class _Writes:
    """Every value written to each shared key, and the keys some event removed."""

    values: dict[str, list[Any]] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)

    def add(self, changes: dict[str, Any], removed: Sequence[str]) -> None:
        for key, value in changes.items():
            self.values.setdefault(key, []).append(value)
        self.removed.update(removed)


async def _all_events(
    service: BaseSessionService, app_name: str, user_id: str, session_id: str
) -> list[Event]:
    found: list[Event] = []
    cursor = None
    while True:
        page = await service.list_events(
            app_name=app_name, user_id=user_id, session_id=session_id, limit=_PAGE, cursor=cursor
        )
        found.extend(page.events)
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


def _compare(
    stored: dict[str, Any],
    expected: dict[str, Any],
    make: Callable[[str, Kind, Any, Any], StateDifference],
) -> list[StateDifference]:
    found = []
    for key in sorted(expected.keys() | stored.keys()):
        if key not in stored:
            found.append(make(key, "missing", None, expected[key]))
        elif key not in expected:
            found.append(make(key, "unexpected", stored[key], None))
        elif stored[key] != expected[key]:
            found.append(make(key, "different", stored[key], expected[key]))
    return found


async def verify_session(
    service: BaseSessionService, *, app_name: str, user_id: str, session_id: str
) -> list[StateDifference]:
    """The differences between the session's own stored state and the fold of its log.

    Raises ``SessionNotFoundError`` for a missing session.
    """
    differences, _ = await _check_session(service, app_name, user_id, session_id)
    return differences


async def _check_session(
    service: BaseSessionService, app_name: str, user_id: str, session_id: str
) -> tuple[list[StateDifference], list[Event]]:
    head = await service.get_session(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        config=_NO_EVENTS,
    )
    initial = await service.get_initial_state(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    if head is None or initial is None:
        raise SessionNotFoundError(app_name=app_name, user_id=user_id, session_id=session_id)
    events = await _all_events(service, app_name, user_id, session_id)
    expected = session_state_of(initial, events)
    stored = split_by_scope(head.state).session

    def make(key: str, kind: Kind, got: Any, want: Any) -> StateDifference:
        return StateDifference(app_name, user_id, session_id, "session", key, kind, got, want)

    return _compare(stored, expected, make), events


def _shared_differences(
    app_name: str,
    user_id: str | None,
    scope: Scope,
    prefix: str,
    stored: dict[str, Any],
    writes: _Writes,
) -> list[StateDifference]:
    found = []
    for key in sorted(writes.values.keys() | stored.keys()):
        written = writes.values.get(key, [])
        name = prefix + key
        if key not in stored:
            if key not in writes.removed:
                found.append(
                    StateDifference(
                        app_name, user_id, None, scope, name, "missing", None, written[-1]
                    )
                )
        elif not written:
            found.append(
                StateDifference(
                    app_name, user_id, None, scope, name, "unexpected", stored[key], None
                )
            )
        elif stored[key] not in written:
            found.append(
                StateDifference(
                    app_name, user_id, None, scope, name, "different", stored[key], written
                )
            )
    return found


async def verify_store(
    service: BaseSessionService,
    *,
    app_name: str | None = None,
    user_id: str | None = None,
    session_id: str | None = None,
    on_session: Callable[[int, int], None] | None = None,
) -> VerifyReport:
    """Check every session of the store (or of one app, user or session).

    Session-scope state is checked exactly against the fold of each session's
    log. ``user:`` keys are checked when all of a user's sessions are (no
    ``session_id``), ``app:`` keys when all of an app's are (no ``user_id``).
    ``on_session(done, total)`` is called after each session (for progress bars).
    """
    if session_id is not None and (app_name is None or user_id is None):
        raise ValueError("verifying one session needs its app name and user id too")
    if user_id is not None and app_name is None:
        raise ValueError("verifying one user needs the app name too")
    apps = [app_name] if app_name is not None else await service.list_app_names()
    targets: list[tuple[str, str, str]] = []
    if session_id is not None:
        assert app_name is not None and user_id is not None
        targets.append((app_name, user_id, session_id))
    else:
        for app in apps:
            listed = await service.list_sessions(app_name=app, user_id=user_id)
            targets.extend((app, s.user_id, s.id) for s in listed.sessions)
    report = VerifyReport()
    user_writes: dict[tuple[str, str], _Writes] = {}
    app_writes: dict[str, _Writes] = {}
    shared_seen: dict[tuple[str, str], dict[str, Any]] = {}
    for done, (app, user, sid) in enumerate(targets, start=1):
        differences, events = await _check_session(service, app, user, sid)
        report.differences.extend(differences)
        report.sessions_checked += 1
        if session_id is None:
            initial = await service.get_initial_state(app_name=app, user_id=user, session_id=sid)
            head = await service.get_session(
                app_name=app, user_id=user, session_id=sid, config=_NO_EVENTS
            )
            assert initial is not None and head is not None
            shared_seen[(app, user)] = head.state
            start = split_by_scope(initial)
            users = user_writes.setdefault((app, user), _Writes())
            apps_ = app_writes.setdefault(app, _Writes())
            users.add(start.user, [])
            apps_.add(start.app, [])
            for event in events:
                scoped = event_scopes(event)
                users.add(scoped.user, scoped.removed_from("user"))
                apps_.add(scoped.app, scoped.removed_from("app"))
        if on_session is not None:
            on_session(done, len(targets))
    for (app, user), writes in user_writes.items():
        stored = split_by_scope(shared_seen[(app, user)]).user
        report.differences.extend(_shared_differences(app, user, "user", "user:", stored, writes))
        report.users_checked += 1
    if user_id is None and session_id is None:
        for app, writes in app_writes.items():
            some_user = next(user for (a, user) in shared_seen if a == app)
            stored = split_by_scope(shared_seen[(app, some_user)]).app
            report.differences.extend(_shared_differences(app, None, "app", "app:", stored, writes))
            report.apps_checked += 1
    return report
