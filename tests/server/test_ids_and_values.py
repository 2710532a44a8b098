"""Over HTTP, a bad app/user/session id is a 422 naming the id (never a 500), and state values
come back exactly (big integers, ``-0.0``, ``1e308``), on the stores the server runs on."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.harness import asgi_client, run_body
from tests.support.databases import postgres_database

SESSIONS = "/apps/echo/users/{user}/sessions"


@asynccontextmanager
async def client(kind: str, tmp: Path) -> AsyncIterator[httpx.AsyncClient]:
    if kind == "postgres":
        async with postgres_database() as url, asgi_client(store=url) as api:  # type: ignore[attr-defined]
            yield api
    else:
        store = str(tmp / "sessions.db") if kind == "sqlite" else "memory://"
        async with asgi_client(store=store) as api:
            yield api


STORES = ["memory", "sqlite", "postgres"]


@pytest.mark.parametrize("kind", STORES)
async def test_bad_ids_answer_422_naming_the_id(kind: str, tmp_path: Path) -> None:
    async with client(kind, tmp_path) as api:
        long_user = "u" * 100_000  # in a body (httpx refuses URLs over 65,536 characters)
        refused = [
            (await api.post(SESSIONS.format(user="nul%00"), json={}), "user id 'nul\\x00'"),
            (await api.get(SESSIONS.format(user="u" * 129)), "user id 'uuuu"),
            (await api.post(SESSIONS.format(user="u" * 5000), json={}), "it is 5000 characters"),
            (
                await api.post("/run", json=run_body("echo", "s1", "hi", userId=long_user)),
                "it is 100000 characters",
            ),
            (await api.post(SESSIONS.format(user="ada"), json={"sessionId": ""}), "it is empty"),
            (
                await api.post(
                    SESSIONS.format(user="ada"),
                    content=b'{"sessionId": "a\\ud800"}',
                    headers={"content-type": "application/json"},
                ),
                "lone surrogate",
            ),
            (await api.get(SESSIONS.format(user="ada") + "/s%00"), "session id 's\\x00'"),
            (await api.delete(SESSIONS.format(user="ada") + "/s%1b"), "control character"),
            (await api.post("/run", json=run_body("echo", "s1", "hi", userId="a\x00")), "user id"),
        ]
        for response, named in refused:
            assert response.status_code == 422, response.text
            assert named in response.json()["detail"], response.json()
            assert "not a valid id" in response.json()["detail"]
        assert (await api.post(SESSIONS.format(user="ada"), json={"sessionId": "ok"})).is_success


EXACT: dict[str, Any] = {
    "big": 2**64,
    "negative_zero": -0.0,
    "huge": 1e308,
    "one": 1.0,
    "nested": [-0.0, {"big": -(2**70)}],
}


@pytest.mark.parametrize("kind", STORES)
async def test_state_values_come_back_exactly_over_http(kind: str, tmp_path: Path) -> None:
    async with client(kind, tmp_path) as api:
        base = SESSIONS.format(user="ada")
        created = await api.post(base, json={"sessionId": "s1", "state": {"initial": EXACT}})
        assert created.status_code == 200, created.text
        patched = await api.patch(base + "/s1", json={"stateDelta": EXACT})
        assert patched.status_code == 200, patched.text
        got = await api.get(base + "/s1")
        state = json.loads(got.text)["state"]  # json keeps 1.0 a float and -0.0 negative
        assert repr(sorted(state.items())) == repr(sorted({"initial": EXACT, **EXACT}.items()))
