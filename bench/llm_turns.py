"""One LLM turn, 200 times in one session, in memory, with a zero-latency scripted model.

A turn: the user asks, the model calls a tool, the tool writes state, the model
answers. Prints turns/s and the cost of turn 200 over turn 10.

    python bench/llm_turns.py [--turns 200]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import statistics
import sys
import time
from typing import Any

from google.genai import types

from cairn import Agent, InMemoryRunner, ToolContext
from cairn.testing import Call, ScriptedLlm

REFERENCE = "google-adk 2.13.0 (quoted from the issue, not measured): ~20 turns/s, 20 ms -> 99 ms"


def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """Look up the weather in a city."""
    tool_context.state["last_city"] = city
    return {"city": city, "celsius": 21}


async def run(turns: int) -> None:
    script: list[Any] = []
    for i in range(turns):
        script += [Call("get_weather", city=f"city-{i}"), f"It is 21°C in city-{i}."]
    agent = Agent(name="weather", model=ScriptedLlm(script=script), tools=[get_weather])
    runner = InMemoryRunner(agent=agent, app_name="bench")
    await runner.session_service.create_session(app_name="bench", user_id="u", session_id="s")
    durations: list[float] = []
    gc.collect()
    for i in range(turns):
        message = types.Content(role="user", parts=[types.Part(text=f"weather in city-{i}?")])
        started = time.perf_counter()
        async for _ in runner.run_async(user_id="u", session_id="s", new_message=message):
            pass
        durations.append(time.perf_counter() - started)
    window = max(1, turns // 20)
    early = statistics.median(durations[max(0, 9 - window // 2) : 9 + window // 2 + 1])
    late = statistics.median(durations[-window:])
    print(f"cairn LLM-turn benchmark; Python {sys.version.split()[0]}; {platform.machine()}")
    print(f"turns/s over {turns} turns in one session:     {turns / sum(durations):,.1f}")
    print(f"turn 10 (median around it):                    {early * 1000:.2f} ms")
    print(f"turn {turns} (median of the last {window}):             {late * 1000:.2f} ms")
    print(f"cost of turn {turns} over turn 10:                 {late / early:.2f}x")
    print(f"reference: {REFERENCE}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=200)
    asyncio.run(run(parser.parse_args().turns))


if __name__ == "__main__":
    main()
