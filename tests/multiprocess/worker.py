"""One worker process of the multi-process store tests.

The test starts ``run(spec)`` in a new process (multiprocessing's
``forkserver`` context, which has this module preloaded). The worker opens its
OWN store from the spec (``{"sqlite": path}`` or ``{"url": database_url}``),
creates the file ``<signals>/ready-<name>`` once the store is open, waits for
``<signals>/go`` when ``"wait_for_go"`` is set, does its ``"role"`` and writes
what it did and saw to ``<signals>/result-<name>`` (or its traceback to
``<signals>/error-<name>``, exiting with a non-zero code).

Roles:

- ``run``: ``count`` invocations through a Runner on one session (each a user
  event plus ``steps`` agent events), pausing ``pause`` seconds between them.
  With ``inside``/``release`` the agent, once inside its invocation, creates
  ``<signals>/<inside>`` (its pid and invocation id) and waits for
  ``<signals>/<release>`` before yielding. A ``SessionBusyError`` ends the role
  and is reported, not raised.
- ``tool``: one invocation through a Runner whose model calls ``transfer``, a
  *synchronous* tool that appends a line to the file ``counter``, creates
  ``<signals>/<inside>`` (its pid and invocation id) and then blocks (``time.sleep``)
  until ``<signals>/<release>`` exists. Reports the invocation's events (and the
  ``LeaseLostError`` that ended it, if another process took the session over).
- ``append``: ``count`` events appended directly with ``append_event``, event
  ``i`` writing the state key ``key.format(worker=name, i=i)`` with the value
  ``value.format(worker=name, i=i)``, pausing ``pause`` seconds between them.
  With ``rounds``, append ``i`` waits for ``<signals>/round-<i>`` and is
  followed by creating ``<signals>/done-<i>-<name>``.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import traceback
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from google.genai import types

from cairn import (
    Agent,
    BaseAgent,
    Event,
    EventActions,
    InvocationContext,
    Runner,
    SessionBusyError,
)
from cairn.errors import LeaseLostError
from cairn.sessions import BaseSessionService, DatabaseSessionService, SqliteSessionService
from cairn.testing import Call, ScriptedLlm

WAIT_LIMIT = 60.0
"""No wait for a signal file lasts longer than this (seconds)."""

AGENT_STARTS: list[dict[str, Any]] = []
"""When (wall clock) each invocation's agent started, in this process."""


def open_store(spec: dict[str, Any]) -> BaseSessionService:
    if "sqlite" in spec:
        return SqliteSessionService(spec["sqlite"])
    return DatabaseSessionService(spec["url"])


def signal(path: Path, payload: dict[str, Any]) -> None:
    """Create ``path`` atomically, so a reader never sees it half-written."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(payload))
    os.replace(partial, path)


async def wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT_LIMIT
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear within {WAIT_LIMIT} s")
        await asyncio.sleep(0.005)


class StepAgent(BaseAgent):
    """Yields ``steps`` events; the last one counts the session's turns in its state."""

    steps: int = 3
    inside: str | None = None
    release: str | None = None

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        AGENT_STARTS.append({"invocation_id": ctx.invocation_id, "wall": time.time()})
        if self.inside is not None:
            signal(Path(self.inside), {"pid": os.getpid(), "invocation_id": ctx.invocation_id})
        if self.release is not None:
            await wait_for(Path(self.release))
        for step in range(self.steps):
            delta: dict[str, Any] = {}
            if step == self.steps - 1:
                delta["turns"] = ctx.session.state.get("turns", 0) + 1
            yield Event(
                content=types.Content(
                    role="model", parts=[types.Part(text=f"{ctx.invocation_id} step {step}")]
                ),
                actions=EventActions(state_delta=delta),
            )
            await asyncio.sleep(0.001)


async def run_role(store: BaseSessionService, spec: dict[str, Any]) -> dict[str, Any]:
    signals = Path(spec["signals"])
    agent = StepAgent(
        name="stepper",
        steps=spec.get("steps", 3),
        inside=str(signals / spec["inside"]) if spec.get("inside") else None,
        release=str(signals / spec["release"]) if spec.get("release") else None,
    )
    runner = Runner(
        app_name=spec["app"],
        agent=agent,
        session_service=store,
        session_busy_timeout=spec.get("busy_timeout", 0.0),
        session_lease_ttl=spec.get("lease_ttl", 30.0),
    )
    invocations: list[dict[str, Any]] = []
    for index in range(spec["count"]):
        seen: list[Event] = []
        try:
            async for event in runner.run_async(
                user_id=spec["user"],
                session_id=spec["session"],
                new_message=types.Content(
                    role="user", parts=[types.Part(text=f"{spec['name']} #{index}")]
                ),
                yield_user_message=True,
            ):
                seen.append(event)
        except SessionBusyError as exc:
            busy = {"message": str(exc), "holder": exc.holder, "session_id": exc.session_id}
            return {"invocations": invocations, "busy": busy}
        invocations.append(
            {
                "invocation_id": seen[0].invocation_id,
                "event_ids": [event.id for event in seen],
                "agent_started_wall": AGENT_STARTS[-1]["wall"],
            }
        )
        # Give the processes waiting for the lease (they poll it) a chance to take it.
        await asyncio.sleep(spec.get("pause", 0.0))
    return {"invocations": invocations, "busy": None}


async def tool_role(store: BaseSessionService, spec: dict[str, Any]) -> dict[str, Any]:
    signals = Path(spec["signals"])

    def transfer(amount: int) -> dict[str, int]:
        """Send money (not idempotent: it must run once)."""
        with open(spec["counter"], "a") as counter:
            counter.write(f"{os.getpid()}\n")
        signal(signals / spec["inside"], {"pid": os.getpid()})
        deadline = time.monotonic() + WAIT_LIMIT
        while not (signals / spec["release"]).exists():  # blocking work, on purpose
            if time.monotonic() > deadline:
                raise TimeoutError("never released")
            time.sleep(0.01)
        return {"sent": amount}

    model = ScriptedLlm(script=[Call("transfer", amount=100), "sent"])
    runner = Runner(
        app_name=spec["app"],
        agent=Agent(name="banker", model=model, tools=[transfer]),
        session_service=store,
        session_lease_ttl=spec["lease_ttl"],
    )
    seen: list[Event] = []
    lost = None
    try:
        async for event in runner.run_async(
            user_id=spec["user"],
            session_id=spec["session"],
            new_message=types.Content(role="user", parts=[types.Part(text="send 100")]),
            yield_user_message=True,
        ):
            seen.append(event)
    except LeaseLostError as exc:  # another process took the session over meanwhile
        lost = {"holder": exc.holder, "current_holder": exc.current_holder}
    return {
        "event_ids": [event.id for event in seen[1:]],
        "invocation_id": seen[0].invocation_id,
        "lost": lost,
    }


async def append_role(store: BaseSessionService, spec: dict[str, Any]) -> dict[str, Any]:
    session = await store.get_session(
        app_name=spec["app"], user_id=spec["user"], session_id=spec["session"]
    )
    assert session is not None, "the test creates the session before starting the worker"
    signals = Path(spec["signals"])
    event_ids = []
    for i in range(spec["count"]):
        if spec.get("rounds"):
            await wait_for(signals / f"round-{i}")
        key = spec["key"].format(worker=spec["name"], i=i)
        value = spec["value"].format(worker=spec["name"], i=i)
        event = await store.append_event(session, Event(author=spec["name"], state={key: value}))
        event_ids.append(event.id)
        if spec.get("rounds"):
            signal(signals / f"done-{i}-{spec['name']}", {})
        # Let the other writers in (SQLite's lock favours whoever asks again at once).
        await asyncio.sleep(spec.get("pause", 0.0))
    return {"event_ids": event_ids, "revision": session.revision}


async def main(spec: dict[str, Any]) -> dict[str, Any]:
    store = open_store(spec["store"])
    signals = Path(spec["signals"])
    try:
        # Open the connection (and check the schema) before reporting ready.
        await store.get_session(app_name=spec["app"], user_id=spec["user"], session_id="-")
        signal(signals / f"ready-{spec['name']}", {"pid": os.getpid()})
        if spec.get("wait_for_go"):
            await wait_for(signals / "go")
        if spec["role"] == "run":
            result = await run_role(store, spec)
        elif spec["role"] == "tool":
            result = await tool_role(store, spec)
        elif spec["role"] == "append":
            result = await append_role(store, spec)
        else:
            raise ValueError(f"unknown role {spec['role']!r}")
    finally:
        await store.close()
    return {"pid": os.getpid(), **result}


def run(spec: dict[str, Any]) -> None:
    """The body of a worker process."""
    signals = Path(spec["signals"])
    try:
        outcome = asyncio.run(main(spec))
    except BaseException:
        (signals / f"error-{spec['name']}").write_text(traceback.format_exc())
        raise
    signal(signals / f"result-{spec['name']}", outcome)
