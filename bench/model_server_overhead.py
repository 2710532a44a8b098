"""cairn's overhead for one short turn against a real local model server.

    .venv/bin/python bench/model_server_overhead.py [--turns 20] [--max-tokens 8]

Starts the test model server (llama-cpp-python with SmolLM2-135M, tests/support/
model_server.py; built into its cache the first time) and times one short turn three ways,
interleaved round by round so that drift of the machine hits all three alike:

- direct: the `openai` client's `chat.completions.create` with the exact body cairn sends
  (captured from cairn's first request), so the model does the same work;
- cairn, memory: `Runner.run_async` of an `Agent` on `OpenAILlm`, in-memory store, a new
  session per turn (the user event and the reply committed);
- cairn, SQLite: the same on `SqliteSessionService` (a file, synchronous=FULL).

Each turn asks for a fixed number of tokens at temperature 0 with a fixed seed. Prints the
median of `--turns` turns per way, and cairn's overhead over direct (median difference,
ms, and ratio). It measures and prints; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402
import openai  # noqa: E402
from google.genai import types  # noqa: E402
from tests.support.model_server import ModelServer, running_server  # noqa: E402

from cairn import Agent, InMemorySessionService, Runner, SqliteSessionService  # noqa: E402
from cairn.models.openai_llm import OpenAILlm  # noqa: E402
from cairn.sessions.base_session_service import BaseSessionService  # noqa: E402

PROMPT = "Say hello."


class Captured:
    def __init__(self) -> None:
        self.body: dict[str, Any] | None = None

    async def keep(self, request: httpx2.Request) -> None:
        if self.body is None:
            self.body = json.loads(request.content)


def agent_for(server: ModelServer, max_tokens: int, client: httpx2.AsyncClient) -> Agent:
    llm = OpenAILlm(model=server.cairn_model, base_url=server.base_url, http_client=client)
    config = types.GenerateContentConfig(temperature=0, max_output_tokens=max_tokens, seed=7)
    return Agent(name="greeter", model=llm, generate_content_config=config)


async def one_cairn_turn(runner: Runner, service: BaseSessionService) -> float:
    session = await service.create_session(app_name="bench", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text=PROMPT)])
    began = time.perf_counter()
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass
    return time.perf_counter() - began


async def one_direct_call(client: openai.AsyncOpenAI, body: dict[str, Any]) -> float:
    began = time.perf_counter()
    await client.chat.completions.create(**body)
    return time.perf_counter() - began


async def measure(server: ModelServer, turns: int, max_tokens: int, folder: Path) -> None:
    captured = Captured()
    capturing = httpx2.AsyncClient(event_hooks={"request": [captured.keep]})
    memory = InMemorySessionService()
    sqlite = SqliteSessionService(str(folder / "sessions.db"))
    runners = {
        "cairn, memory": (
            Runner(
                app_name="bench",
                agent=agent_for(server, max_tokens, capturing),
                session_service=memory,
            ),
            memory,
        ),
        "cairn, SQLite": (
            Runner(
                app_name="bench",
                agent=agent_for(server, max_tokens, httpx2.AsyncClient()),
                session_service=sqlite,
            ),
            sqlite,
        ),
    }
    direct = openai.AsyncOpenAI(base_url=server.base_url, api_key="not-needed")
    # Warm-up: one turn each (the server's first prompt, imports, the SQLite schema).
    for runner, service in runners.values():
        await one_cairn_turn(runner, service)
    assert captured.body is not None
    body = captured.body
    await one_direct_call(direct, body)
    times: dict[str, list[float]] = {"direct": [], **{name: [] for name in runners}}
    for _ in range(turns):
        times["direct"].append(await one_direct_call(direct, body))
        for name, (runner, service) in runners.items():
            times[name].append(await one_cairn_turn(runner, service))
    await sqlite.close()
    await direct.close()
    base = statistics.median(times["direct"])
    print(f"one short turn ({max_tokens} tokens asked, temperature 0), median of {turns}:")
    print(f"  {'direct openai client':<24} {base * 1000:8.1f} ms")
    for name in runners:
        median = statistics.median(times[name])
        differences = [c - d for c, d in zip(times[name], times["direct"], strict=True)]
        print(
            f"  {name:<24} {median * 1000:8.1f} ms   overhead {(median - base) * 1000:+7.1f} ms"
            f" (median of paired differences {statistics.median(differences) * 1000:+.1f} ms),"
            f" ratio {median / base:.3f}x"
        )
    print(f"request body: {json.dumps(body)[:300]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=8)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, running_server(Path(folder)) as server:
        asyncio.run(measure(server, arguments.turns, arguments.max_tokens, Path(folder)))


if __name__ == "__main__":
    main()
