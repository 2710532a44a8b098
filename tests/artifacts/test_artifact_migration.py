"""A database at revision 0002 gains the artifact table in place, keeping its sessions."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from alembic import command
from google.genai import types
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import create_async_engine
from tests.support.databases import mariadb_database, postgres_database

from cairn.artifacts import SessionStoreArtifactService
from cairn.sessions import DatabaseSessionService
from cairn.sessions.sql.migrate import _alembic_config, head_revision


@asynccontextmanager
async def database_url(kind: str, tmp: Path) -> AsyncIterator[str]:
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp / 'store.db'}"
    elif kind == "postgres":
        async with postgres_database() as url:  # type: ignore[attr-defined]
            yield url
    else:
        async with mariadb_database() as url:  # type: ignore[attr-defined]
            yield url


def upgrade_to_0002(connection: Connection) -> None:
    command.upgrade(_alembic_config(connection), "0002")


@pytest.mark.parametrize("kind", ["sqlite", "postgres", "mariadb"])
async def test_a_revision_0002_database_gains_artifacts_in_place(kind: str, tmp_path: Path) -> None:
    async with database_url(kind, tmp_path) as url:
        engine = create_async_engine(url)
        async with engine.begin() as connection:
            await connection.run_sync(upgrade_to_0002)
        await engine.dispose()

        async with DatabaseSessionService(url) as store:
            report = await store.migrate()
            assert (report.from_revision, report.applied) == (
                "0002",
                ["0003", "0004", "0005", "0006", "0007", "0008", "0009", "0010"],
            )
            assert report.to_revision == head_revision() == "0010"
            await store.create_session(app_name="app", user_id="u", session_id="s")
            service = SessionStoreArtifactService(store)
            version = await service.save_artifact(
                app_name="app",
                user_id="u",
                session_id="s",
                filename="a.bin",
                artifact=types.Part(inline_data=types.Blob(data=b"\x00\x01", mime_type="x/y")),
            )
            assert version == 0
