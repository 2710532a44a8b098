"""``cairn verify``: a consistent store passes; each corrupted state row is reported."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from tests.support.databases import postgres_database

from cairn import Event
from cairn.cli import main
from cairn.events import EventActions
from cairn.sessions.factory import session_service_from_url

APP = "shop"


@pytest.fixture(params=["sqlite", "postgres"])
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "sessions.db")
        return
    async with postgres_database() as url:  # type: ignore[attr-defined]
        yield url


def _sql_url(store: str) -> str:
    return store if "://" in store else f"sqlite+aiosqlite:///{store}"


async def _populate(store: str) -> None:
    service = session_service_from_url(store)
    try:
        one = await service.create_session(
            app_name=APP, user_id="ann", session_id="s1", state={"cart": [], "user:tier": "gold"}
        )
        await service.append_event(
            one, Event(author="agent", state={"cart": ["tea"], "app:sale": True, "step": 1})
        )
        await service.append_event(
            one, Event(author="agent", actions=EventActions(removed_state_keys=["step"]))
        )
        await service.fork_session(
            app_name=APP, user_id="ann", session_id="s1", new_session_id="s2"
        )
        two = await service.create_session(app_name=APP, user_id="bob", session_id="s3")
        await service.append_event(two, Event(author="agent", state={"user:tier": "silver"}))
    finally:
        await service.close()


async def _corrupt(store: str) -> None:
    engine = create_async_engine(_sql_url(store))
    json_value = "CAST(:v AS jsonb)" if store.startswith("postgresql") else ":v"
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    f"UPDATE cairn_state SET value = {json_value} "
                    "WHERE scope = 's' AND session_id = 's1' AND key = 'cart'"
                ),
                {"v": json.dumps(["coffee"])},
            )
            await connection.execute(
                text("DELETE FROM cairn_state WHERE scope = 'u' AND user_id = 'bob'")
            )
            await connection.execute(
                text(
                    "INSERT INTO cairn_state (app_name, scope, user_id, session_id, key, value) "
                    f"VALUES ('shop', 's', 'ann', 's2', 'ghost', {json_value})"
                ),
                {"v": json.dumps(1)},
            )
    finally:
        await engine.dispose()


def cairn(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_verify_passes_a_consistent_store_and_reports_each_corruption(store_url: str) -> None:
    asyncio.run(_populate(store_url))
    code, output = cairn("verify", "--store", store_url)
    assert code == 0, output
    assert "checked 3 session(s), the shared state of 2 user(s) and 1 app(s)" in output
    assert "state equals the fold of the log" in output

    asyncio.run(_corrupt(store_url))
    code, output = cairn("verify", "--store", store_url)
    assert code == 4, output
    assert (
        "app 'shop', user 'ann', session 's1': session key 'cart' is stored as ['coffee']; "
        "the fold of the log gives ['tea']" in output
    )
    assert "session 's2': session key 'ghost' is stored as 1, but the log never sets it" in output
    assert "user 'bob': user key 'user:tier' is missing; the log sets it to 'silver'" in output
    assert "3 difference(s)" in output

    code, output = cairn("verify", "--store", store_url, "--json")
    assert code == 4
    lines = [json.loads(line) for line in output.splitlines()]
    assert {(d["session"], d["key"], d["kind"]) for d in lines} == {
        ("s1", "cart", "different"),
        ("s2", "ghost", "unexpected"),
        (None, "user:tier", "missing"),
    }

    code, output = cairn(
        "verify", "--store", store_url, "--app", APP, "--user", "ann", "--session", "s1"
    )
    assert code == 4 and "1 difference(s)" in output and "checked 1 session(s):" in output
    code, output = cairn("verify", "--store", store_url, "--app", APP, "--user", "bob")
    assert code == 4 and "checked 1 session(s), the shared state of 1 user(s):" in output


def test_verify_refuses_unknown_sessions_and_incomplete_options(tmp_path: Path) -> None:
    store = str(tmp_path / "sessions.db")
    asyncio.run(_populate(store))
    code, output = cairn(
        "verify", "--store", store, "--app", APP, "--user", "ann", "--session", "x"
    )
    assert code == 1 and "'x'" in output and "does not exist" in output
    code, output = cairn("verify", "--store", store, "--user", "ann")
    assert code == 2 and "--user needs --app" in output
    code, output = cairn("verify", "--store", store, "--app", "nothing-here")
    assert code == 0 and "checked 0 session(s)" in output
