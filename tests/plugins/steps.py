"""A step of a plugin test app (a message, or approving what waits), in this process or in
a new one (``worker.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from google.genai import types
from tests.plugins.apps import user

from cairn import Event, Runner

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).resolve().parent / "worker.py"
USER, SESSION = "u1", "s1"


async def run_step(runner: Runner, step: list[str]) -> list[Event]:
    """``["say", text]`` or ``["confirm"]`` (approve every pending confirmation)."""
    if step[0] == "say":
        message = user(step[1])
    else:
        pending = await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)
        message = types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=interrupt.id, name=interrupt.name, response={"confirmed": True}
                    )
                )
                for interrupt in pending
            ],
        )
    return [
        event
        async for event in runner.run_async(user_id=USER, session_id=SESSION, new_message=message)
    ]


def in_new_process(db: Path, app: str, step: list[str], log: Path) -> list[Event]:
    done = subprocess.run(
        [sys.executable, str(WORKER), str(db), app, *step],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "CAIRN_PLUGIN_LOG": str(log)},
    )
    assert done.returncode == 0, done.stderr
    return [
        Event.model_validate(json.loads(line.removeprefix("EVENT ")))
        for line in done.stdout.splitlines()
        if line.startswith("EVENT ")
    ]
