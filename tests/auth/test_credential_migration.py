"""A database created by cairn before credentials existed (revision 0001) upgrades in place."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from alembic import command
from sqlalchemy import JSON, Connection, bindparam, insert, inspect, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import create_async_engine
from tests.auth.conftest import database_url, open_store

from cairn.auth import (
    APIKey,
    APIKeyIn,
    AuthConfig,
    AuthCredential,
    AuthCredentialTypes,
    SessionStoreCredentialService,
)
from cairn.sessions.sql.migrate import _alembic_config, head_revision
from cairn.sessions.sql.schema import USER_SCOPE, VERSION_TABLE, sessions, state

JSON_0001 = JSON().with_variant(postgresql.JSONB(), "postgresql")
"""The type of the JSON columns at revision 0001 (the current tables hold JSON text)."""


def create_revision_0001_with_a_session(connection: Connection) -> None:
    command.upgrade(_alembic_config(connection), "0001")
    assert "cairn_credentials" not in inspect(connection).get_table_names()
    now = time.time()
    connection.execute(
        insert(sessions).values(
            app_name="app",
            user_id="ann",
            session_id="s1",
            revision=0,
            create_time=now,
            update_time=now,
            initial_state=bindparam(None, {"user:city": "Oslo"}, type_=JSON_0001),
        )
    )
    connection.execute(
        insert(state).values(
            app_name="app",
            scope=USER_SCOPE,
            user_id="ann",
            session_id="",
            key="city",
            value=bindparam(None, "Oslo", type_=JSON_0001),
        )
    )


@pytest.mark.parametrize("kind", ["sqlite", "db-sqlite", "postgres", "mariadb"])
async def test_a_revision_0001_database_gains_credentials_in_place(
    kind: str, tmp_path: Path
) -> None:
    async with database_url(kind, tmp_path) as url:
        engine = create_async_engine(url)
        async with engine.begin() as connection:
            await connection.run_sync(create_revision_0001_with_a_session)
        await engine.dispose()

        store = open_store(kind, url)
        try:
            report = await store.migrate()
            assert (report.from_revision, report.applied[:1]) == ("0001", ["0002"])
            assert report.to_revision == head_revision()
            session = await store.get_session(app_name="app", user_id="ann", session_id="s1")
            assert session is not None and session.state == {"user:city": "Oslo"}

            config = AuthConfig(
                auth_scheme=APIKey(in_=APIKeyIn.header, name="X-Key"),
                exchanged_auth_credential=AuthCredential(
                    auth_type=AuthCredentialTypes.API_KEY, api_key="k-1"
                ),
            )
            service = SessionStoreCredentialService(store)
            context = SimpleNamespace(
                invocation_context=SimpleNamespace(app_name="app", user_id="ann")
            )
            await service.save_credential(config, context)
            loaded = await service.load_credential(config, context)
            assert loaded is not None and loaded.api_key == "k-1"
        finally:
            await store.close()

        engine = create_async_engine(url)
        async with engine.connect() as connection:
            versions = (await connection.execute(text(f"SELECT * FROM {VERSION_TABLE}"))).all()
        await engine.dispose()
        assert [tuple(v) for v in versions] == [(head_revision(),)]
