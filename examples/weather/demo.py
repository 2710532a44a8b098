"""Seed 1's weather scenario, traced: user u1 of app ``weather`` with sessions s1 and s2.

Run it with ``python examples/weather/demo.py``. It stores everything in the
embedded default store, a SQLite file (``.cairn/weather-demo.db``, made anew
on each run), and prints every event the Runner yields (each one already
committed), the event's state delta, and the state each session sees
afterwards: s2 sees ``user:temperature_unit`` but not s1's ``last_city``, and
no ``temp:`` key survives its invocation. At the end a second store object
reopens the file and reads the history back.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from google.genai import types

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent import root_agent

from cairn import App, BaseSessionService, Event, Runner, SqliteSessionService

APP, USER = "weather", "u1"
STORE = Path(".cairn") / "weather-demo.db"


def describe(event: Event) -> str:
    parts = event.content.parts if event.content and event.content.parts else []
    shown = []
    for part in parts:
        if part.text:
            shown.append(repr(part.text))
        elif part.function_call:
            shown.append(f"call {part.function_call.name}({part.function_call.args})")
        elif part.function_response:
            shown.append(f"result {part.function_response.response}")
    return ", ".join(shown) or "(no content)"


async def turn(runner: Runner, session_id: str, text: str) -> None:
    print(f"\n[{session_id}] user: {text}")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
        delta = event.actions.state_delta
        print(f"  {event.author:>14} | {describe(event)}")
        if delta:
            print(f"  {'':>14} |   state delta: {json.dumps(delta, ensure_ascii=False)}")


async def show_state(service: BaseSessionService, session_id: str) -> None:
    session = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
    assert session is not None
    state = json.dumps(dict(sorted(session.state.items())), ensure_ascii=False)
    print(f"  state {session_id} sees: {state}  ({len(session.events)} events stored)")


async def main() -> None:
    for leftover in STORE.parent.glob(STORE.name + "*"):
        leftover.unlink()  # a fresh file each run
    service = SqliteSessionService(STORE)
    print(f"store: SQLite file {STORE}")
    runner = Runner(app=App(name=APP, root_agent=root_agent), session_service=service)
    for session_id in ("s1", "s2"):
        await service.create_session(app_name=APP, user_id=USER, session_id=session_id)

    print("== s1, invocation i1: a city plus a lasting preference")
    await turn(runner, "s1", "What's the weather in Hangzhou? Use Celsius from now on.")
    await show_state(service, "s1")

    print("\n== s1, invocation i2: the session remembers the city")
    await turn(runner, "s1", "And tomorrow?")
    await show_state(service, "s1")

    print("\n== s2: a new session of the same user shares user: state, not last_city")
    await show_state(service, "s2")
    await turn(runner, "s2", "And tomorrow?")
    await turn(runner, "s2", "What about Beijing?")
    await show_state(service, "s2")
    await show_state(service, "s1")
    await service.close()

    print("\n== a new store object on the same file: the log is all there")
    reopened = SqliteSessionService(STORE)
    s1 = await reopened.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert s1 is not None
    tool_result = next(e for e in s1.events if e.get_function_responses())
    print(f"  s1 has {len(s1.events)} events, revision {s1.revision}")
    stored_delta = json.dumps(tool_result.actions.state_delta, ensure_ascii=False)
    print(f"  the stored tool-result event's delta (no temp: key): {stored_delta}")
    await reopened.close()


if __name__ == "__main__":
    asyncio.run(main())
