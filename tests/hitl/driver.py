"""Run the steps of a human-in-the-loop scenario in this process or each in a new one.

``worker.py`` is the new-process side: it takes the same step, runs it with a
fresh Runner on the same store, and prints what happened as JSON lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from google.genai import types
from tests.hitl.scenarios import APP, build

from cairn import Event, Interrupt, Runner
from cairn.auth import (
    BaseCredentialService,
    InMemoryCredentialService,
    SessionStoreCredentialService,
)
from cairn.errors import CairnError
from cairn.sessions import BaseSessionService
from cairn.sessions.factory import session_service_from_url
from cairn.sessions.sql.store import SqlSessionStore

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).resolve().parent / "worker.py"
USER, SESSION = "u1", "s1"


@dataclass
class Outcome:
    events: list[Event] = field(default_factory=list)
    pending: list[Interrupt] = field(default_factory=list)
    error: tuple[str, str] | None = None
    killed: bool = False

    @property
    def text(self) -> str:
        for event in reversed(self.events):
            if event.content and event.content.parts and event.content.parts[0].text:
                return event.content.parts[0].text
        return ""


def message_for(step: dict[str, Any]) -> types.Content | None:
    if "say" in step:
        return types.Content(role="user", parts=[types.Part(text=step["say"])])
    if "answer" in step:
        return types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=interrupt_id, name=name, response=response
                    )
                )
                for interrupt_id, name, response in step["answer"]
            ],
        )
    return None


def credential_service_for(store: BaseSessionService) -> BaseCredentialService:
    """Credentials kept where the sessions are (so a new process finds them)."""
    if isinstance(store, SqlSessionStore):
        return SessionStoreCredentialService(store)
    return InMemoryCredentialService()


async def run_step(runner: Runner, step: dict[str, Any], *, echo: bool = False) -> Outcome:
    """One step on ``runner``: a message, answers, a bare continue, or a pending listing."""
    outcome = Outcome()
    try:
        if not step.get("pending_only"):
            async for event in runner.run_async(
                user_id=USER,
                session_id=SESSION,
                new_message=message_for(step),
                invocation_id=step.get("continue"),
            ):
                outcome.events.append(event)
                if echo:
                    print("EVENT " + event.to_json(), flush=True)
    except CairnError as error:
        outcome.error = (type(error).__name__, str(error))
    outcome.pending = await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)
    return outcome


_OutcomeT = TypeVar("_OutcomeT", bound=Outcome)


def read_outcome(output: str, outcome: _OutcomeT) -> _OutcomeT:
    """``outcome`` filled from a worker's output lines (``EVENT``, ``PENDING``, ``ERROR``)."""
    for line in output.splitlines():
        kind, _, body = line.partition(" ")
        if kind == "EVENT":
            outcome.events.append(Event.model_validate_json(body))
        elif kind == "PENDING":
            outcome.pending = [Interrupt.model_validate(i) for i in json.loads(body)]
        elif kind == "ERROR":
            name, _, text = body.partition(" ")
            outcome.error = (name, text)
    return outcome


class Driver:
    """Steps of one scenario on one store, each in this process or each in a new process."""

    def __init__(self, store_url: str, scenario: str, where: str, runs_file: Path) -> None:
        self.store_url, self.scenario, self.where = store_url, scenario, where
        self.runs_file = runs_file
        self._runner: Runner | None = None

    def _env(self, extra: dict[str, str]) -> dict[str, str]:
        return {**os.environ, "CAIRN_HITL_RUNS": str(self.runs_file), **extra}

    async def step(self, step: dict[str, Any], **env: str) -> Outcome:
        if self.where == "new":
            return self._in_new_process(step, env)
        os.environ["CAIRN_HITL_RUNS"] = str(self.runs_file)
        if self._runner is None:
            store = session_service_from_url(self.store_url)
            self._runner = Runner(
                app_name=APP,
                agent=build(self.scenario),
                session_service=store,
                auto_create_session=True,
                credential_service=credential_service_for(store),
            )
        return await run_step(self._runner, step)

    def _in_new_process(self, step: dict[str, Any], env: dict[str, str]) -> Outcome:
        done = subprocess.run(
            [sys.executable, str(WORKER), self.store_url, self.scenario, json.dumps(step)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
            env=self._env(env),
        )
        assert done.returncode in (0, -9), done.stderr
        return read_outcome(done.stdout, Outcome(killed=done.returncode == -9))

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.session_service.close()
