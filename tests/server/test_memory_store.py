"""The server gives its agents a memory service: in memory by default, or a store that lasts."""

from __future__ import annotations

from pathlib import Path

import httpx
from tests.server.harness import asgi_client, run_body

from cairn.server import ServerSettings


async def _say(api: httpx.AsyncClient, session: str, message: str) -> str:
    await api.post("/apps/memo/users/ada/sessions", json={"sessionId": session})
    events = (await api.post("/run", json=run_body("memo", session, message))).json()
    return str(events[-1]["content"]["parts"][0]["text"])


async def test_memories_outlive_the_session_and_the_server_process(tmp_path: Path) -> None:
    memory = str(tmp_path / "memory.db")
    async with asgi_client(memory_store=memory) as api:
        assert await _say(api, "s1", "My cat is called Tofu") == "noted"
        assert await _say(api, "s2", "recall cat") == "My cat is called Tofu"
    async with asgi_client(memory_store=memory) as api:  # a restarted server
        assert await _say(api, "s3", "recall Tofu") == "My cat is called Tofu"
    async with asgi_client() as api:  # the default: in memory, per process
        assert await _say(api, "s4", "recall Tofu") == "nothing"


def test_the_memory_store_comes_from_the_environment() -> None:
    settings = ServerSettings.from_env({"CAIRN_MEMORY_STORE": "postgresql://db/mem"})
    assert settings.memory_store == "postgresql://db/mem"
    assert ServerSettings.from_env({}).memory_store is None
