"""One step of a plugin test app in a process of its own, on a SQLite file.

    python tests/plugins/worker.py <sessions.db> <app> say <text>
    python tests/plugins/worker.py <sessions.db> <app> confirm

``confirm`` approves every pending confirmation. Each event the Runner yields is printed
as ``EVENT <json>``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.plugins.apps import build
from tests.plugins.steps import run_step

from cairn import Runner
from cairn.sessions.sqlite_session_service import SqliteSessionService


async def main(db: str, app: str, step: list[str]) -> None:
    store = SqliteSessionService(db)
    runner = Runner(app=build(app), session_service=store, auto_create_session=True)
    try:
        for event in await run_step(runner, step):
            print("EVENT " + event.model_dump_json(by_alias=True, exclude_none=True), flush=True)
    finally:
        await runner.close()
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
