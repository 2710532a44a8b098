"""Schema migrations: in place, idempotent, race-safe, and refusing what they do not know."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import JSON, Connection, bindparam, insert, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import create_async_engine
from tests.support.databases import mariadb_database, postgres_database

from cairn import DatabaseSessionService, Event, SqliteSessionService, StoreDamagedError
from cairn.sessions.sql.migrate import (
    HEAD_REVISION,
    SchemaError,
    _alembic_config,
    _known_revisions,
    head_revision,
)
from cairn.sessions.sql.schema import SESSION_SCOPE, VERSION_TABLE, metadata, sessions, state

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", "postgres", "mariadb"])
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    elif request.param == "postgres":
        async with postgres_database() as url:  # type: ignore[attr-defined]
            yield url
    else:
        async with mariadb_database() as url:  # type: ignore[attr-defined]
            yield url


async def test_migrations_create_exactly_the_schema_the_code_uses(database_url: str) -> None:
    async with DatabaseSessionService(database_url) as service:
        first = await service.migrate()
        again = await service.migrate()
        assert first.from_revision is None and first.applied == _known_revisions()
        assert first.applied[-1] == head_revision()
        assert again.from_revision == head_revision() and again.applied == []

        def differences(connection):  # type: ignore[no-untyped-def]
            context = MigrationContext.configure(connection)
            return [
                diff
                for diff in compare_metadata(context, metadata)
                # MariaDB reports JSON as LONGTEXT and the version table is alembic's own.
                if not (diff[0] == "remove_table" and diff[1].name == VERSION_TABLE)
                and diff[0] != "modify_type"
            ]

        async with service.engine.connect() as connection:
            assert await connection.run_sync(differences) == []


async def test_a_newer_schema_is_refused(database_url: str) -> None:
    async with DatabaseSessionService(database_url) as service:
        await service.migrate()
        async with service.engine.begin() as connection:
            await connection.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = '9999'"))
    async with DatabaseSessionService(database_url) as fresh:
        with pytest.raises(SchemaError, match=r"'9999' is newer.*Upgrade cairn"):
            await fresh.create_session(app_name="a", user_id="u")


async def test_foreign_tables_are_refused(database_url: str) -> None:
    async with DatabaseSessionService(database_url) as service:
        async with service.engine.begin() as connection:
            await connection.execute(text("CREATE TABLE cairn_sessions (id INTEGER PRIMARY KEY)"))
        with pytest.raises(SchemaError, match=r"cairn_sessions.*no cairn_alembic_version"):
            await service.get_session(app_name="a", user_id="u", session_id="s")


async def test_damaged_tables_are_refused_naming_the_column(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    service = SqliteSessionService(path)
    await service.create_session(app_name="a", user_id="u", session_id="s")
    await service.close()
    with sqlite3.connect(path) as connection:
        connection.execute("ALTER TABLE cairn_leases DROP COLUMN expires_at")
    with pytest.raises(SchemaError, match=r"cairn_leases lacks the column\(s\) expires_at"):
        await SqliteSessionService(path).get_session(app_name="a", user_id="u", session_id="s")


async def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database" * 100)
    store = SqliteSessionService(path)
    with pytest.raises(StoreDamagedError, match=r"notes.db is damaged.*not a database"):
        await store.get_session(app_name="a", user_id="u", session_id="s")
    assert path.read_bytes() == b"these are my notes, not a database" * 100
    await store.close()


async def test_data_survives_reopening_and_is_readable_by_both_sqlite_stores(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    writer = SqliteSessionService(path)
    session = await writer.create_session(
        app_name="a", user_id="u", session_id="s", state={"user:x": 1}
    )
    event = Event(author="bot", state={"k": [1, {"v": None}]})
    await writer.append_event(session, event)
    await writer.close()
    async with DatabaseSessionService(f"sqlite+aiosqlite:///{path}") as reader:
        loaded = await reader.get_session(app_name="a", user_id="u", session_id="s")
    assert loaded is not None and loaded.events == [event]
    assert loaded.state == {"user:x": 1, "k": [1, {"v": None}]}


OPEN_AND_WRITE = """
import asyncio, sys
from cairn import Event
from cairn.sessions.factory import session_service_from_url

async def main():
    service = session_service_from_url(sys.argv[1])
    session = await service.create_session(app_name="race", user_id="u", session_id=sys.argv[2])
    await service.append_event(session, Event(author="w", state={"app:last": sys.argv[2]}))
    await service.close()

asyncio.run(main())
"""


async def _race(store: str, tmp_path: Path) -> None:
    script = tmp_path / "open_and_write.py"
    script.write_text(textwrap.dedent(OPEN_AND_WRITE))
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable, str(script), store, f"s{i}", stderr=subprocess.PIPE
        )
        for i in range(4)
    ]
    results = [await p.communicate() for p in processes]
    assert [p.returncode for p in processes] == [0] * 4, [r[1].decode() for r in results]


async def test_processes_starting_at_once_migrate_once(database_url: str, tmp_path: Path) -> None:
    store = database_url.replace("sqlite+aiosqlite", "sqlite")
    await _race(store, tmp_path)
    async with DatabaseSessionService(database_url) as service:
        assert await service.count_sessions(app_name="race") == 4
        async with service.engine.connect() as connection:
            versions = (await connection.execute(text(f"SELECT * FROM {VERSION_TABLE}"))).all()
        assert [tuple(v) for v in versions] == [(head_revision(),)]


def test_cairn_migrate_says_what_it_did(tmp_path: Path) -> None:
    store = str(tmp_path / "cli.db")

    def cairn(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cairn.cli", *args], capture_output=True, text=True, timeout=60
        )

    first = cairn("migrate", "--store", store)
    assert first.returncode == 0, first.stderr
    assert "migrated from empty database to revision" in first.stdout
    assert f"applied {head_revision()}" in first.stdout
    second = cairn("migrate", "--store", store)
    assert second.returncode == 0 and "schema is current" in second.stdout
    bad = cairn("migrate", "--store", "oracle://scott:tiger@db/x")
    assert bad.returncode == 2 and "postgresql+asyncpg" in bad.stderr
    assert "tiger" not in bad.stderr
    unreachable = cairn("migrate", "--store", "postgresql://u:s3cret@127.0.0.1:1/x")
    assert unreachable.returncode == 2
    assert "127.0.0.1:1" in unreachable.stderr and "s3cret" not in unreachable.stderr


JSON_0003 = JSON().with_variant(postgresql.JSONB(), "postgresql")
"""The type of state values and initial states up to revision 0003 (0005 makes them text)."""
OLD_VALUES = {"precise": 0.1 + 0.2, "int": 3, "text": "3", "nested": {"a": [1.5, None]}}


def create_revision_0003_with_state(connection: Connection) -> None:
    command.upgrade(_alembic_config(connection), "0003")
    connection.execute(
        insert(sessions).values(
            app_name="a",
            user_id="u",
            session_id="s",
            revision=0,
            create_time=1.0,
            update_time=1.0,
            initial_state=bindparam(None, OLD_VALUES, type_=JSON_0003),
        )
    )
    for name, value in OLD_VALUES.items():
        connection.execute(
            insert(state).values(
                app_name="a",
                scope=SESSION_SCOPE,
                user_id="u",
                session_id="s",
                key=name,
                value=bindparam(None, value, type_=JSON_0003),
            )
        )


async def test_state_of_a_revision_0003_database_survives_0005_exactly(database_url: str) -> None:
    engine = create_async_engine(database_url)
    async with engine.begin() as connection:
        await connection.run_sync(create_revision_0003_with_state)
    await engine.dispose()
    async with DatabaseSessionService(database_url) as store:
        report = await store.migrate()
        assert report.from_revision == "0003" and "0005" in report.applied
        loaded = await store.get_session(app_name="a", user_id="u", session_id="s")
        initial = await store.get_initial_state(app_name="a", user_id="u", session_id="s")
        assert loaded is not None and exactly(loaded.state) == exactly(OLD_VALUES)
        assert initial is not None and exactly(initial) == exactly(OLD_VALUES)
        exact = {"big": 2**64, "zero": -0.0, "huge": 1e308, "one": 1.0}
        await store.append_event(loaded, Event(author="a", state=exact))
        again = await store.get_session(app_name="a", user_id="u", session_id="s")
        assert again is not None and exactly(again.state) == exactly({**OLD_VALUES, **exact})


def exactly(state: dict[str, Any]) -> str:
    """``state`` with its types showing (``1 == 1.0`` and ``0.0 == -0.0`` in Python)."""
    return repr(sorted(state.items()))


def test_the_head_revision_constant_is_the_newest_migration() -> None:
    # A database at HEAD_REVISION is taken as current without loading alembic.
    assert head_revision() == HEAD_REVISION
