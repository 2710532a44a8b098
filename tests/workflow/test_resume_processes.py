"""Pause at each node of a 4-node workflow, resume from a new process: nothing runs twice."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.support.databases import postgres_database

from cairn.sessions.factory import session_service_from_url

WORKER = Path(__file__).resolve().parent / "resume_worker.py"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", "postgres"])
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "sessions.db")
    else:
        async with postgres_database() as url:  # type: ignore[attr-defined]
            yield url


def worker(store_url: str, pause_at: str, mode: str) -> str:
    result = subprocess.run(
        [sys.executable, str(WORKER), store_url, pause_at, mode],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("pause_at", ["a", "b", "c", "d"])
async def test_pause_anywhere_resume_in_a_new_process(store_url: str, pause_at: str) -> None:
    assert "OUTPUT" not in worker(store_url, pause_at, "start")
    resumed = worker(store_url, pause_at, "resume")
    expected = "in"
    for name in ("a", "b", "c", "d"):
        expected = "ANSWER" if name == pause_at else f"{expected}>{name}"
    assert f"OUTPUT {expected}" in resumed
    store = session_service_from_url(store_url)
    session = await store.get_session(app_name="resume", user_id="u", session_id="s")
    await store.close()
    assert session is not None
    assert {k: v for k, v in session.state.items() if k.startswith("count_")} == {
        "count_a": 1,
        "count_b": 1,
        "count_c": 1,
        "count_d": 1,
    }
