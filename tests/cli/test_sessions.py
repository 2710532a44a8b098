"""``cairn sessions``: list, show, export and import; a store round-trips exactly."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from google.genai import types
from rich.console import Console
from tests.support.databases import mariadb_database, postgres_database

from cairn import Event
from cairn.cli import main
from cairn.cli.sessions import _progress, _sessions_of
from cairn.errors import InvalidEventError, SessionAlreadyExistsError
from cairn.events import EventActions
from cairn.sessions.factory import session_service_from_url

APP = "shop"


def cairn(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(arg) for arg in args], env={"COLUMNS": "200"})


async def _populate(store: str) -> None:
    """Two users of 'shop' (a fork, bytes, a removed key, shared state) and another app."""
    service = session_service_from_url(store)
    try:
        one = await service.create_session(
            app_name=APP, user_id="ann", session_id="s1", state={"cart": [], "user:tier": "gold"}
        )
        await service.append_event(one, Event(author="user", message="a pot of tea, please"))
        await service.append_event(
            one, Event(author="clerk", state={"cart": ["tea"], "app:sale": True, "step": 1})
        )
        picture = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x00\xff"))
        await service.append_event(
            one, Event(author="clerk", content=types.Content(role="model", parts=[picture]))
        )
        await service.append_event(
            one, Event(author="clerk", actions=EventActions(removed_state_keys=["step"]))
        )
        await service.fork_session(
            app_name=APP, user_id="ann", session_id="s1", new_session_id="s2"
        )
        two = await service.create_session(app_name=APP, user_id="bob", session_id="s3")
        await service.append_event(two, Event(author="clerk", state={"user:tier": "silver"}))
        await service.create_session(app_name="other", user_id="cy", session_id="o1")
    finally:
        await service.close()


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = str(tmp_path / "sessions.db")
    asyncio.run(_populate(url))
    return url


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- list -----------------------------------------------------------------------------------------
def test_list_shows_the_apps_when_there_are_several(store: str) -> None:
    result = cairn("sessions", "list", "--store", store)
    assert result.exit_code == 0, result.output
    assert "other" in result.output and "shop" in result.output and "--app" in result.output
    listing = json.loads(cairn("sessions", "list", "--store", store, "--json").output)
    assert listing == {"apps": [{"name": "other", "sessions": 1}, {"name": "shop", "sessions": 3}]}


def test_list_pages_an_apps_sessions(store: str) -> None:
    result = cairn("sessions", "list", "--store", store, "--app", APP)
    assert result.exit_code == 0, result.output
    assert "3 session(s)" in result.output
    for session_id in ("s1", "s2", "s3"):
        assert session_id in result.output
    first = json.loads(cairn("sessions", "list", "--store", store, "--app", APP, "--limit", "2",
                             "--json").output)  # fmt: skip
    assert first["total"] == 3 and len(first["sessions"]) == 2
    assert first["sessions"][0] == {
        "id": "s3",
        "userId": "bob",
        "events": 1,
        "lastUpdateTime": pytest.approx(first["sessions"][0]["lastUpdateTime"]),
    }
    rest = cairn(
        "sessions", "list", "--store", store, "--app", APP, "--limit", "2", "--json",
        "--cursor", first["nextCursor"],
    )  # fmt: skip
    second = json.loads(rest.output)
    ids = [s["id"] for s in first["sessions"] + second["sessions"]]
    assert sorted(ids) == ["s1", "s2", "s3"] and second["nextCursor"] is None
    text = cairn("sessions", "list", "--store", store, "--app", APP, "--limit", "2")
    assert "--cursor" in text.output


def test_list_of_one_user(store: str) -> None:
    listing = json.loads(
        cairn("sessions", "list", "--store", store, "--app", APP, "--user", "ann", "--json").output
    )
    assert sorted(s["id"] for s in listing["sessions"]) == ["s1", "s2"]


def test_an_empty_store_lists_nothing(tmp_path: Path) -> None:
    result = cairn("sessions", "list", "--store", str(tmp_path / "empty.db"))
    assert result.exit_code == 0
    assert "no sessions" in result.output


# -- show -----------------------------------------------------------------------------------------
def test_show_prints_state_by_scope_and_the_events(store: str) -> None:
    result = cairn("sessions", "show", "s1", "--store", store, "--app", APP, "--user", "ann")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "user:tier" in out and "app:sale" in out and '["tea"]' in out
    assert "a pot of tea, please" in out and "[image/png, 2 bytes]" in out
    assert "state -step" in out and "events 1–4 of 4" in out


def test_show_finds_the_user_and_shows_the_newest_events_as_stored(store: str) -> None:
    result = cairn("sessions", "show", "s1", "--store", store, "--app", APP, "--events", "2",
                   "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert shown["userId"] == "ann" and shown["eventCount"] == 4
    assert shown["state"] == {
        "session": {"cart": ["tea"]},
        "user": {"user:tier": "gold"},
        "app": {"app:sale": True},
    }
    assert shown["initialState"] == {"cart": [], "user:tier": "gold"}
    events = [Event.model_validate(e) for e in shown["events"]]
    assert [e.actions.removed_state_keys for e in events] == [None, ["step"]]


def test_show_a_missing_session_exits_1(store: str) -> None:
    result = cairn("sessions", "show", "nope", "--store", store, "--app", APP)
    assert result.exit_code == 1
    assert "'nope'" in result.output
    named = cairn("sessions", "show", "nope", "--store", store, "--app", APP, "--user", "ann")
    assert named.exit_code == 1


def test_show_needs_app_when_the_store_has_several(store: str) -> None:
    result = cairn("sessions", "show", "s1", "--store", store)
    assert result.exit_code == 2
    assert "--app" in result.output


# -- export and import ----------------------------------------------------------------------------
def test_export_writes_a_header_and_one_line_per_session(store: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = cairn("sessions", "export", "--store", store, "-o", out)
    assert result.exit_code == 0, result.output
    assert "exported 4 session(s), 9 event(s)" in result.output
    header, *sessions = _lines(out)
    assert header["format"] == "cairn-sessions" and header["version"] == 1
    by_id = {s["id"]: s for s in sessions}
    assert set(by_id) == {"s1", "s2", "s3", "o1"}
    s1 = by_id["s1"]
    assert s1["appName"] == APP and s1["userId"] == "ann"
    assert s1["initialState"] == {"cart": [], "user:tier": "gold"}
    assert s1["state"] == {"cart": ["tea"], "user:tier": "gold", "app:sale": True}
    stored = asyncio.run(_events(store, "ann", "s1"))
    assert [json.dumps(e) for e in s1["events"]] == [json.dumps(json.loads(raw)) for raw in stored]


async def _events(store: str, user: str, session_id: str) -> list[str]:
    service = session_service_from_url(store)
    try:
        page = await service.list_events(app_name=APP, user_id=user, session_id=session_id)
        return [event.to_json() for event in page.events]
    finally:
        await service.close()


def test_export_selects_an_app_a_user_or_a_session(store: str, tmp_path: Path) -> None:
    def ids(*options: str) -> list[str]:
        out = tmp_path / "part.jsonl"
        assert cairn("sessions", "export", "--store", store, "-o", out, *options).exit_code == 0
        return sorted(s["id"] for s in _lines(out)[1:])

    assert ids("--app", APP) == ["s1", "s2", "s3"]
    assert ids("--app", APP, "--user", "ann") == ["s1", "s2"]
    assert ids("--app", APP, "--user", "ann", "--session", "s2") == ["s2"]
    missing = cairn("sessions", "export", "--store", store, "--app", APP, "--user", "ann",
                    "--session", "nope")  # fmt: skip
    assert missing.exit_code == 1
    assert cairn("sessions", "export", "--store", store, "--user", "ann").exit_code == 2


def test_export_to_standard_output(store: str) -> None:
    result = cairn("sessions", "export", "--store", store, "--app", "other")
    assert result.exit_code == 0
    header, session = (json.loads(line) for line in result.output.splitlines())
    assert header["format"] == "cairn-sessions" and session["id"] == "o1"


def test_a_round_trip_is_exact(store: str, tmp_path: Path) -> None:
    out, back = tmp_path / "out.jsonl", tmp_path / "back.jsonl"
    copy = str(tmp_path / "copy.db")
    assert cairn("sessions", "export", "--store", store, "-o", out).exit_code == 0
    result = cairn("sessions", "import", out, "--store", copy)
    assert result.exit_code == 0, result.output
    assert "imported 4 session(s), 9 event(s)" in result.output
    assert cairn("verify", "--store", copy).exit_code == 0
    assert cairn("sessions", "export", "--store", copy, "-o", back).exit_code == 0
    assert out.read_text().splitlines()[1:] == back.read_text().splitlines()[1:]


def test_import_refuses_existing_sessions_and_imports_nothing(store: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert cairn("sessions", "export", "--store", store, "--app", APP, "-o", out).exit_code == 0
    copy = str(tmp_path / "copy.db")
    asyncio.run(_one_session(copy, "s3", "bob"))
    result = cairn("sessions", "import", out, "--store", copy)
    assert result.exit_code == 2
    assert "'s3' (app 'shop', user 'bob')" in result.output
    assert "Nothing was imported" in result.output
    listing = json.loads(cairn("sessions", "list", "--store", copy, "--json").output)
    assert listing["total"] == 1

    skipped = cairn("sessions", "import", out, "--store", copy, "--skip-existing")
    assert skipped.exit_code == 0, skipped.output
    assert "imported 2 session(s)" in skipped.output and "skipped 1" in skipped.output
    shown = json.loads(cairn("sessions", "show", "s3", "--store", copy, "--json").output)
    assert shown["eventCount"] == 0  # kept as it was

    replaced = cairn("sessions", "import", out, "--store", copy, "--replace")
    assert replaced.exit_code == 0, replaced.output
    shown = json.loads(cairn("sessions", "show", "s3", "--store", copy, "--json").output)
    assert shown["eventCount"] == 1
    assert cairn("verify", "--store", copy).exit_code == 0


async def _one_session(store: str, session_id: str, user: str) -> None:
    service = session_service_from_url(store)
    try:
        await service.create_session(app_name=APP, user_id=user, session_id=session_id)
    finally:
        await service.close()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"format": "something-else"}\n', "not a cairn session export"),
        ('{"format": "cairn-sessions", "version": 2}\n', "version 2"),
        ('{"format": "cairn-sessions", "version": 1}\nnot json\n', "line 3 is not JSON"),
        ('{"format": "cairn-sessions", "version": 1}\n{"appName": "a", "userId": "u"}\n',
         "line 3: 'id'"),
        ('{"format": "cairn-sessions", "version": 1}\n'
         '{"appName": "a", "userId": "u", "id": "s", "events": [{"timestamp": "x"}]}\n',
         "line 3: event 0 is not a cairn event"),
    ],
)  # fmt: skip
def test_a_malformed_file_is_refused_before_anything_is_imported(
    tmp_path: Path, content: str, problem: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    good = '{"appName": "a", "userId": "u", "id": "first"}\n'
    header, *rest = content.splitlines(keepends=True)
    bad.write_text(header + good + "".join(rest))
    copy = str(tmp_path / "copy.db")
    result = cairn("sessions", "import", bad, "--store", copy)
    assert result.exit_code == 2, result.output
    assert problem in result.output
    assert json.loads(cairn("sessions", "list", "--store", copy, "--json").output) == {"apps": []}


def test_a_session_twice_in_one_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "twice.jsonl"
    line = '{"appName": "a", "userId": "u", "id": "s"}\n'
    bad.write_text('{"format": "cairn-sessions", "version": 1}\n' + line + line)
    result = cairn("sessions", "import", bad, "--store", str(tmp_path / "copy.db"))
    assert result.exit_code == 2
    assert "also on line 2" in result.output


def test_import_of_a_missing_file_exits_1(tmp_path: Path) -> None:
    result = cairn("sessions", "import", tmp_path / "nope.jsonl", "--store", "memory://")
    assert result.exit_code == 1


def test_replace_and_skip_existing_do_not_go_together(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"format": "cairn-sessions", "version": 1}\n')
    result = cairn("sessions", "import", path, "--replace", "--skip-existing")
    assert result.exit_code == 2


@pytest.fixture(params=["postgres", "mariadb"])
async def database(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    fresh = postgres_database if request.param == "postgres" else mariadb_database
    async with fresh() as url:  # type: ignore[attr-defined]
        yield url


def test_sqlite_to_database_round_trip(store: str, database: str, tmp_path: Path) -> None:
    """Exported from SQLite, imported into PostgreSQL (or MariaDB), exported again: the same."""
    out, back = tmp_path / "out.jsonl", tmp_path / "back.jsonl"
    assert cairn("sessions", "export", "--store", store, "-o", out).exit_code == 0
    result = cairn("sessions", "import", out, "--store", database)
    assert result.exit_code == 0, result.output
    checked = cairn("verify", "--store", database)
    assert checked.exit_code == 0, checked.output
    assert cairn("sessions", "export", "--store", database, "-o", back).exit_code == 0
    assert out.read_text().splitlines()[1:] == back.read_text().splitlines()[1:]
    shown = json.loads(cairn("sessions", "show", "s1", "--store", database, "--app", APP,
                             "--json").output)  # fmt: skip
    assert shown["state"]["user"] == {"user:tier": "gold"}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_import_session_lands_whole_with_its_shared_state(tmp_path: Path, kind: str) -> None:
    service = session_service_from_url("memory://" if kind == "memory" else str(tmp_path / "a.db"))
    events = [
        Event(author="clerk", state={"cart": ["tea"], "user:tier": "gold", "app:sale": True}),
        Event(author="clerk", state={"temp:scratch": 1, "step": 2}),
    ]
    try:
        session = await service.import_session(
            app_name=APP,
            user_id="ann",
            session_id="s1",
            events=events,
            initial_state={"cart": []},
            state={"cart": ["tea"], "step": 2, "user:tier": "gold", "app:sale": True},
            last_update_time=1_000.0,
        )
        assert session.revision == 2 and session.last_update_time == 1_000.0
        assert session.state == {"cart": ["tea"], "step": 2, "user:tier": "gold", "app:sale": True}
        assert "temp:scratch" not in session.events[1].actions.state_delta
        other = await service.create_session(app_name=APP, user_id="ann", session_id="s2")
        assert other.state == {"user:tier": "gold", "app:sale": True}
        with pytest.raises(InvalidEventError, match="two events with this id"):
            await service.import_session(
                app_name=APP, user_id="ann", session_id="s3", events=[events[0], events[0]]
            )
        with pytest.raises(SessionAlreadyExistsError):
            await service.import_session(app_name=APP, user_id="ann", session_id="s1", events=[])
        assert await service.get_session(app_name=APP, user_id="ann", session_id="s3") is None
        folded = await service.import_session(
            app_name=APP, user_id="bob", session_id="s4", events=events, initial_state={"n": 1}
        )
        assert folded.state["step"] == 2 and folded.state["n"] == 1
    finally:
        await service.close()


async def test_export_includes_sessions_updated_while_it_lists() -> None:
    service = session_service_from_url("memory://")
    for number in range(150):
        await service.create_session(app_name=APP, user_id="ann", session_id=f"s{number:03}")
    oldest = await service.get_session(app_name=APP, user_id="ann", session_id="s000")
    assert oldest is not None
    seen: set[tuple[str, str]] = set()
    listed = []
    async for session in _sessions_of(service, APP, None, seen):
        if not listed:  # s000 is on the second page: moving it to the front hides it
            await service.append_event(oldest, Event(author="clerk", state={"touched": True}))
        listed.append(session.id)
    assert sorted(listed) == [f"s{number:03}" for number in range(150)]


def test_export_to_a_file_it_cannot_write_exits_2(store: str, tmp_path: Path) -> None:
    result = cairn("sessions", "export", "--store", store, "-o", tmp_path / "no" / "such.jsonl")
    assert result.exit_code == 2
    assert "cannot write" in result.output


def test_progress_bars_show_only_on_a_terminal() -> None:
    terminal = Console(file=io.StringIO(), force_terminal=True)
    piped = Console(file=io.StringIO(), force_terminal=False)
    assert not _progress(terminal, "exporting").disable
    assert _progress(piped, "exporting").disable
