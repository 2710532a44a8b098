"""Several stores opening the same brand-new SQLite file at once all succeed."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cairn import DatabaseSessionService, SqliteSessionService


async def test_many_stores_open_a_new_file_at_once(tmp_path: Path) -> None:
    for attempt in range(5):
        url = f"sqlite+aiosqlite:///{tmp_path}/new-{attempt}.db"
        stores = [DatabaseSessionService(url) for _ in range(4)]
        try:
            await asyncio.gather(
                *(
                    store.create_session(app_name="a", user_id="u", session_id=f"s{index}")
                    for index, store in enumerate(stores)
                )
            )
        finally:
            for store in stores:
                await store.close()
        reader = SqliteSessionService(tmp_path / f"new-{attempt}.db")
        listed = await reader.list_sessions(app_name="a", user_id="u")
        await reader.close()
        assert sorted(s.id for s in listed.sessions) == ["s0", "s1", "s2", "s3"]
