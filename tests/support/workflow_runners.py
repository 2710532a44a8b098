"""A workflow (or agent) on one fresh session, in memory or in a SQLite file: the runner
the workflow tests of dynamic nodes, node kinds and workflow settings share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.genai import types

from cairn import Event, InMemoryRunner, Runner, SqliteSessionService

USER, SESSION = "u", "s"
STORES = ["memory", "sqlite"]


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def answer(call_id: str, value: Any, name: str = "adk_request_input") -> types.Content:
    """The client's answer to a pause: ``value`` as the result of call ``call_id``."""
    response = types.FunctionResponse(id=call_id, name=name, response={"result": value})
    return types.Content(role="user", parts=[types.Part(function_response=response)])


async def runner_on(store: str, agent: Any, app_name: str, folder: Path) -> Runner:
    """A runner for ``agent`` on ``store`` ("memory" or "sqlite", a file in ``folder``),
    with the session ``SESSION`` of ``USER`` made."""
    if store == "memory":
        runner: Runner = InMemoryRunner(agent=agent, app_name=app_name)
    else:
        service = SqliteSessionService(str(folder / f"{agent.name}.db"))
        runner = Runner(app_name=app_name, agent=agent, session_service=service)
    await runner.session_service.create_session(app_name=app_name, user_id=USER, session_id=SESSION)
    return runner


async def run(runner: Runner, message: types.Content) -> list[Event]:
    return [
        e async for e in runner.run_async(user_id=USER, session_id=SESSION, new_message=message)
    ]
