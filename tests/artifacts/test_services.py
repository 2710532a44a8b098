"""What the services refuse, and the session-store service's place in the database."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.genai import types
from sqlalchemy import Connection, select

from cairn.artifacts import (
    InMemoryArtifactService,
    InvalidArtifactNameError,
    SessionStoreArtifactService,
    UnsupportedArtifactError,
)
from cairn.sessions import InMemorySessionService, SqliteSessionService
from cairn.sessions.sql.schema import artifacts


def test_the_session_store_service_needs_a_sql_store() -> None:
    with pytest.raises(TypeError, match="InMemoryArtifactService or FileArtifactService"):
        SessionStoreArtifactService(InMemorySessionService())


async def test_a_part_without_data_or_text_is_refused() -> None:
    call = types.Part(function_call=types.FunctionCall(name="f", args={}))
    with pytest.raises(UnsupportedArtifactError, match=r"'x\.bin' is neither inline data nor text"):
        await InMemoryArtifactService().save_artifact(
            app_name="a", user_id="u", session_id="s", filename="x.bin", artifact=call
        )


@pytest.mark.parametrize("filename", ["", "a\x00b", "user:"])
async def test_every_store_refuses_empty_and_nul_names(filename: str) -> None:
    with pytest.raises(InvalidArtifactNameError):
        await InMemoryArtifactService().save_artifact(
            app_name="a",
            user_id="u",
            session_id="s",
            filename=filename,
            artifact=types.Part(text=""),
        )


async def test_the_sql_store_refuses_too_long_names_and_keeps_rows_in_its_table(
    tmp_path: Path,
) -> None:
    async with SqliteSessionService(tmp_path / "store.db") as store:
        service = SessionStoreArtifactService(store)
        with pytest.raises(InvalidArtifactNameError, match="at most 255"):
            await service.save_artifact(
                app_name="a",
                user_id="u",
                session_id="s",
                filename="x" * 256,
                artifact=types.Part(text=""),
            )
        await service.save_artifact(
            app_name="a",
            user_id="u",
            session_id="s",
            filename="user:p",
            artifact=types.Part(text="p"),
        )

        def rows(connection: Connection) -> list[tuple[object, ...]]:
            query = select(
                artifacts.c.app_name,
                artifacts.c.user_id,
                artifacts.c.session_id,
                artifacts.c.filename,
                artifacts.c.version,
                artifacts.c.data,
            )
            return [tuple(row) for row in connection.execute(query)]

        assert await store.database.transaction(rows, write=False) == [
            ("a", "u", "", "user:p", 0, b"p")
        ]


async def test_file_service_takes_adks_root_dir_keyword(tmp_path: Path) -> None:
    from cairn.artifacts import FileArtifactService
    from cairn.errors import InputValidationError

    service = FileArtifactService(root_dir=tmp_path / "artifacts")
    assert service.root_dir == (tmp_path / "artifacts").resolve()
    version = await service.save_artifact(
        app_name="a", user_id="u", session_id="s", filename="n.txt", artifact=types.Part(text="hi")
    )
    again = FileArtifactService(tmp_path / "artifacts")
    loaded = await again.load_artifact(
        app_name="a", user_id="u", session_id="s", filename="n.txt", version=version
    )
    assert loaded is not None and loaded.text == "hi"
    with pytest.raises(InputValidationError, match=r"'\.\.'"):  # ADK raises this type too
        await service.save_artifact(
            app_name="a", user_id="u", session_id="s", filename="..", artifact=types.Part(text="")
        )
    with pytest.raises(TypeError, match="root_dir="):
        FileArtifactService()
