"""A damaged SQLite store is reported as damage (``StoreDamagedError`` naming the file, exit
code 5 on the command line), never served as an empty store or ended by a traceback: a file
truncated to zero bytes, one with a damaged page, and one that is not SQLite at all."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.cli.harness import AGENTS

from cairn import Event, StoreDamagedError
from cairn.memory import SqliteMemoryService
from cairn.sessions import BaseSessionService, DatabaseSessionService, SqliteSessionService

EXIT_DAMAGED = 5


async def populated(path: Path) -> None:
    """A store with a few sessions and enough events to fill several pages."""
    store = SqliteSessionService(path)
    for s in range(3):
        session = await store.create_session(app_name="shop", user_id="ann", session_id=f"s{s}")
        for n in range(40):
            await store.append_event(session, Event(author="bot", state={"n": n, "pad": "x" * 200}))
    await store.close()  # the last connection checkpoints the WAL into the file


def truncate(path: Path) -> None:
    path.write_bytes(b"")


def damage_a_page(path: Path) -> None:
    """Overwrite the header of the events table's root page (the sessions pages stay intact,
    so a listing alone would not notice)."""
    with sqlite3.connect(path) as connection:
        root = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'cairn_events'"
        ).fetchone()[0]
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    connection.close()
    with path.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * 16)


def overwrite_with_text(path: Path) -> None:
    path.write_bytes(b"not a database at all, just some notes\n" * 200)


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated": (truncate, r"empty \(0 bytes\)"),
    "damaged page": (damage_a_page, "quick_check|malformed"),
    "not sqlite": (overwrite_with_text, "not a database"),
}


def sqlite_store(path: Path) -> BaseSessionService:
    return SqliteSessionService(path)


def database_store(path: Path) -> BaseSessionService:
    return DatabaseSessionService(f"sqlite+aiosqlite:///{path}")


@pytest.mark.parametrize("damage", list(DAMAGE))
@pytest.mark.parametrize("open_store", [sqlite_store, database_store], ids=["sqlite", "db-sqlite"])
async def test_a_damaged_store_is_refused_naming_the_file(
    tmp_path: Path, damage: str, open_store: Callable[[Path], BaseSessionService]
) -> None:
    path = tmp_path / "sessions.db"
    await populated(path)
    harm, problem = DAMAGE[damage]
    harm(path)
    damaged = path.read_bytes()
    store = open_store(path)
    for read in (
        lambda: store.list_sessions(app_name="shop", user_id="ann"),
        lambda: store.get_session(app_name="shop", user_id="ann", session_id="s0"),
        lambda: store.create_session(app_name="shop", user_id="ann"),
    ):
        with pytest.raises(
            StoreDamagedError, match=rf"{path}.*{problem}.*restore it from a backup"
        ):
            await read()
    await store.close()
    assert path.read_bytes() == damaged  # nothing was written: no empty store in its place
    memory = SqliteMemoryService(path)  # the memory store sharing the file refuses it too
    with pytest.raises(StoreDamagedError, match=str(path)):
        await memory.search_memory(app_name="shop", user_id="ann", query="x")
    await memory.close()


@pytest.mark.parametrize("open_store", [sqlite_store, database_store], ids=["sqlite", "db-sqlite"])
async def test_damage_found_after_opening_is_reported_as_damage(
    tmp_path: Path, open_store: Callable[[Path], BaseSessionService]
) -> None:
    path = tmp_path / "sessions.db"
    await populated(path)
    store = open_store(path)
    assert await store.list_app_names() == ["shop"]  # opened, checked, sound
    damage_a_page(path)  # damaged while the store is open: found when the page is read
    with pytest.raises(StoreDamagedError, match=rf"{path}.*malformed"):
        await store.get_session(app_name="shop", user_id="ann", session_id="s0")
    await store.close()


async def test_a_new_store_file_is_created_whole(tmp_path: Path) -> None:
    for name, open_store in (("a.db", sqlite_store), ("b.db", database_store)):
        path = tmp_path / "new" / name
        store = open_store(path)
        session = await store.create_session(app_name="shop", user_id="ann", session_id="s")
        await store.append_event(session, Event(author="bot", state={"k": 1}))
        await store.close()
        assert path.stat().st_size > 0
        assert [p.name for p in path.parent.iterdir() if p.name.endswith(".new")] == []


def cairn(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cairn.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
        input="",
    )


@pytest.mark.parametrize("damage", list(DAMAGE))
async def test_the_cli_reports_damage_with_its_own_exit_code(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "sessions.db"
    await populated(path)
    harm, problem = DAMAGE[damage]
    harm(path)
    for args in (
        ["sessions", "list", "--store", str(path)],
        ["verify", "--store", str(path)],
        ["run", str(AGENTS / "shop.py"), "--store", str(path)],
        ["migrate", "--store", str(path)],
    ):
        result = cairn(tmp_path, *args)
        assert result.returncode == EXIT_DAMAGED, (args, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr + result.stdout
        assert f"the SQLite store {path} is damaged" in result.stderr
        assert "restore it from a backup" in result.stderr
        assert re.search(problem, result.stderr) and result.stdout == ""
