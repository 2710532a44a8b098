"""The session export format: JSON lines, a header then one whole session per line.

::

    {"format": "cairn-sessions", "version": 1, "cairnVersion": "...", "exportedAt": ...}
    {"appName": ..., "userId": ..., "id": ..., "lastUpdateTime": ..., "initialState": {...},
     "state": {...}, "events": [<Event.to_json()>, ...]}

``state`` is the session's merged state as read (``app:``/``user:`` keys
included); ``events`` are exactly as stored, oldest first. A line is written
event by event, so a long session never has to fit in memory on export.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from cairn import __version__
from cairn.cli._errors import CommandError
from cairn.events.event import Event

FORMAT = "cairn-sessions"
VERSION = 1


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def header_line() -> str:
    header = {
        "format": FORMAT,
        "version": VERSION,
        "cairnVersion": __version__,
        "exportedAt": time.time(),
    }
    return _dumps(header) + "\n"


def session_line_start(
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    last_update_time: float,
    initial_state: dict[str, Any],
    state: dict[str, Any],
) -> str:
    """The start of a session's line, up to the opening bracket of its events."""
    head = {
        "appName": app_name,
        "userId": user_id,
        "id": session_id,
        "lastUpdateTime": last_update_time,
        "initialState": initial_state,
        "state": state,
    }
    return _dumps(head)[:-1] + ',"events":['


SESSION_LINE_END = "]}\n"


@dataclass
class ExportedSession:
    """One session read back from an export file."""

    app_name: str
    user_id: str
    id: str
    initial_state: dict[str, Any]
    state: dict[str, Any]
    events: list[Event]
    line: int
    last_update_time: float | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return self.app_name, self.user_id, self.id

    def describe(self) -> str:
        return f"session {self.id!r} of user {self.user_id!r} in app {self.app_name!r}"


def read_sessions(path: Path) -> Iterator[ExportedSession]:
    """Each session of an export file, in order; ``CommandError`` naming the line if the
    file is not one (or comes from a newer cairn)."""
    try:
        with path.open(encoding="utf-8") as stream:
            yield from _parse(stream, path)
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path} is not UTF-8 text ({exc}); is it a session export?") from exc


def _parse(stream: IO[str], path: Path) -> Iterator[ExportedSession]:
    first = stream.readline()
    header = _json_object(first, path, 1)
    if header is None or header.get("format") != FORMAT:
        raise CommandError(
            f"{path} is not a cairn session export: its first line must be "
            f'{{"format": "{FORMAT}", "version": {VERSION}}}. Write one with '
            "`cairn sessions export -o FILE`."
        )
    version = header.get("version")
    if version != VERSION:
        raise CommandError(
            f"{path} is a version {version!r} session export; this cairn "
            f"({__version__}) reads version {VERSION}. Import it with the cairn that wrote it "
            f"({header.get('cairnVersion', 'unknown')}) or a newer one."
        )
    for number, line in enumerate(stream, start=2):
        if not line.strip():
            continue
        data = _json_object(line, path, number)
        if data is None:
            raise CommandError(f"{path} line {number}: expected a session (a JSON object)")
        yield _session(data, path, number)


def _json_object(line: str, path: Path, number: int) -> dict[str, Any] | None:
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise CommandError(f"{path} line {number} is not JSON: {exc}") from None
    return data if isinstance(data, dict) else None


def _session(data: dict[str, Any], path: Path, number: int) -> ExportedSession:
    where = f"{path} line {number}"
    names = {}
    for key in ("appName", "userId", "id"):
        value = data.get(key)
        if not isinstance(value, str) or not value:
            raise CommandError(f"{where}: {key!r} must be a non-empty string")
        names[key] = value
    states = {}
    for key in ("initialState", "state"):
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise CommandError(f"{where}: {key!r} must be a JSON object")
        states[key] = value
    raw_events = data.get("events", [])
    if not isinstance(raw_events, list):
        raise CommandError(f"{where}: 'events' must be a list")
    events = []
    for index, raw in enumerate(raw_events):
        try:
            # JSON mode, as the stores read events (bytes are base64 there, for one).
            events.append(Event.model_validate_json(_dumps(raw)))
        except ValidationError as exc:
            problem = exc.errors()[0]
            field = ".".join(str(part) for part in problem["loc"])
            raise CommandError(
                f"{where}: event {index} is not a cairn event ({field}: {problem['msg']})"
            ) from None
    updated = data.get("lastUpdateTime")
    if updated is not None and (isinstance(updated, bool) or not isinstance(updated, int | float)):
        raise CommandError(f"{where}: 'lastUpdateTime' must be a number (seconds since the epoch)")
    return ExportedSession(
        last_update_time=None if updated is None else float(updated),
        app_name=names["appName"],
        user_id=names["userId"],
        id=names["id"],
        initial_state=states["initialState"],
        state=states["state"],
        events=events,
        line=number,
    )
