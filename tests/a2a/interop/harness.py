"""Real A2A servers and clients of both frameworks, on loopback, and what each side saw.

Servers, each its own process, started here and waited on (a ``READY <url>`` line):

- google-adk 2.13.0's ``to_a2a`` (bench/peer_adk_a2a.py ``serve`` in bench/.peers/adk);
  on shutdown it writes its sessions' events, normalized, to a file;
- cairn's ``to_a2a`` (bench/a2a_round_trips.py ``serve-cairn``) on a SQLite file;
- ``cairn api-server --a2a`` on a SQLite file, serving tests/a2a/interop/agents (each app
  at ``/a2a/<app>``).

The agents on both sides are bench/a2a_twins.py's (``teller``, ``approver``), built from
each framework's classes. Clients: google-adk's RemoteA2aAgent (bench/peer_adk_a2a.py
``client``, one process per turn, its session in an ADK SQLite file) and cairn's (in this
process, a cairn Runner on a SQLite file). What a side saw is a list of events normalized by
bench/a2a_events.py, comparable across frameworks.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from bench import a2a_twins
from bench.a2a_events import normalize_all, pending_call
from google.genai import types
from tests.parity import harness as parity
from tests.server.harness import free_port
from tests.support.databases import REQUIRE_SERVICES
from tests.support.waiting import BOUND_SECONDS, wait_until

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "bench"
AGENTS = Path(__file__).resolve().parent / "agents"
CARD_PATH = "/.well-known/agent-card.json"
USER = "ada"
APP = "caller"


def adk_python() -> Path:
    """google-adk 2.13.0's venv python (with its a2a extra); skips (fails in CI) without it."""
    try:
        return parity.adk_python(install=True)
    except RuntimeError as error:
        reason = f"google-adk[a2a] 2.13.0's venv cannot be made: {error}"
        if REQUIRE_SERVICES:
            pytest.fail(f"{reason} (CAIRN_REQUIRE_SERVICES=1 requires it)")
        pytest.skip(reason)


@dataclass
class Server:
    url: str
    log: Path
    process: subprocess.Popen[bytes]

    @property
    def card(self) -> str:
        return self.url + CARD_PATH


def peer_env() -> dict[str, str]:
    """The environment of a process in ADK's venv: nothing of this project's on its path."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


def announced(log: Path, start: int) -> str | None:
    """The URL of the ``READY <url>`` line written to ``log`` after byte ``start``, if any."""
    for line in log.read_text()[start:].splitlines():
        if line.startswith("READY "):
            return line.split()[-1]
    return None


@contextlib.contextmanager
def running(
    command: list[str], log: Path, env: dict[str, str], ready: Callable[[int], str | None]
) -> Iterator[Server]:
    """Run ``command`` until ``ready(start)`` gives its URL (``start``: where this run's
    output begins in ``log``); stop it with SIGTERM afterwards (unless a test killed it)."""
    start = log.stat().st_size if log.exists() else 0
    with log.open("ab") as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=ROOT
        )
    found: list[str] = []

    def is_ready() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"{command[1:3]} exited {process.returncode}:\n{log.read_text()}")
        url = ready(start)
        found.extend([url] if url else [])
        return bool(url)

    try:
        wait_until(is_ready, f"{' '.join(command[1:4])} being ready")
        yield Server(url=found[0], log=log, process=process)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=BOUND_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def cairn_env() -> dict[str, str]:
    """A cairn process's environment: this tree's cairn, and bench/ importable."""
    path = [str(ROOT / "src"), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


def adk_server(python: Path, agent: str, home: Path) -> contextlib.AbstractContextManager[Server]:
    """google-adk's to_a2a of ``agent``; its sessions land in ``home/adk-server.json`` when it
    stops (``adk_server_view``)."""
    command = [
        str(python), str(BENCH / "peer_adk_a2a.py"), "serve", f"--port={free_port()}",
        f"--agent={agent}", f"--dump={home / 'adk-server.json'}",
    ]  # fmt: skip
    log = home / "adk-server.log"
    return running(command, log, peer_env(), lambda start: announced(log, start))


def cairn_server(
    agent: str, store: Path, home: Path, port: int | None = None
) -> contextlib.AbstractContextManager[Server]:
    """cairn's to_a2a of ``agent`` on the SQLite file ``store`` (the app named ``agent``)."""
    command = [
        sys.executable, str(BENCH / "a2a_round_trips.py"), "serve-cairn",
        f"--port={port or free_port()}", f"--agent={agent}", f"--store={store}",
        "--loop=auto", "--http=auto",
    ]  # fmt: skip
    log = home / "cairn-server.log"
    return running(command, log, cairn_env(), lambda start: announced(log, start))


def cairn_api_server(
    agent: str, store: Path, home: Path, port: int | None = None
) -> contextlib.AbstractContextManager[Server]:
    """``cairn api-server --a2a`` of tests/a2a/interop/agents on the SQLite file ``store``;
    the Server's URL is the A2A base of the app ``agent`` (``/a2a/<agent>``)."""
    port = port or free_port()
    command = [
        sys.executable, "-m", "cairn.cli", "api-server", str(AGENTS), "--a2a",
        f"--port={port}", f"--store={store}",
    ]  # fmt: skip
    url = f"http://127.0.0.1:{port}/a2a/{agent}"

    def card_served(start: int) -> str | None:
        try:
            answer = httpx.get(url + CARD_PATH, timeout=BOUND_SECONDS)
        except httpx.HTTPError:
            return None
        return url if answer.status_code == 200 else None

    return running(command, home / "cairn-api-server.log", cairn_env(), card_served)


def adk_server_view(home: Path) -> list[list[dict[str, Any]]]:
    """The events of each session google-adk's server kept (after it stopped), by session."""
    found: dict[str, list[dict[str, Any]]] = json.loads((home / "adk-server.json").read_text())
    return sorted(found.values(), key=json.dumps)


async def cairn_server_view(store: Path, app: str) -> list[list[dict[str, Any]]]:
    """The events of each session of ``app`` in cairn's log on ``store``, by session."""
    from cairn.sessions.sqlite_session_service import SqliteSessionService

    service = SqliteSessionService(store)
    try:
        listed = await service.list_sessions(app_name=app)
        views = []
        for summary in listed.sessions:
            session = await service.get_session(
                app_name=app, user_id=summary.user_id, session_id=summary.id
            )
            assert session is not None
            views.append(normalize_all([dumped(event) for event in session.events]))
        return sorted(views, key=json.dumps)
    finally:
        await service.close()


async def cairn_runs(store: Path, app: str) -> list[Any]:
    """The run rows of every session of ``app`` on ``store``."""
    from cairn.sessions.run_store import run_store_for
    from cairn.sessions.sqlite_session_service import SqliteSessionService

    service = SqliteSessionService(store)
    try:
        runs = run_store_for(service)
        listed = await service.list_sessions(app_name=app)
        found = []
        for summary in listed.sessions:
            found.extend(await runs.list_runs(app, summary.user_id, summary.id, limit=100))
        return found
    finally:
        await service.close()


SEND_RECORD = "cairn_a2a_send_message"
"""cairn's RemoteA2aAgent records each message to its remote like a tool call, in its log
only (cairn.a2a.agent.exchanges); its Runner yields no record, as google-adk's yields none."""


async def cairn_client_sends(store: Path, session: str) -> list[dict[str, Any]]:
    """The arguments of the send records in cairn's client's log on ``store``, in order."""
    from cairn.sessions.sqlite_session_service import SqliteSessionService

    service = SqliteSessionService(store)
    try:
        found = await service.get_session(app_name=APP, user_id=USER, session_id=session)
    finally:
        await service.close()
    assert found is not None, f"cairn's client has no session {session!r} in {store}"
    logged = normalize_all([dumped(event) for event in found.events])
    return [c["args"] for e in logged for c in e.get("calls", []) if c["name"] == SEND_RECORD]


def dumped(event: Any) -> dict[str, Any]:
    data: dict[str, Any] = event.model_dump(mode="json", exclude_none=True)
    return data


def adk_turn(
    python: Path, card: str, store: Path, session: str, *, say: str | None = None,
    answer: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """One turn of google-adk's ``caller`` (RemoteA2aAgent ``remote`` at ``card``): what it
    yielded, normalized."""
    told = ["--say", say] if say is not None else ["--answer", json.dumps(answer)]
    command = [
        str(python), str(BENCH / "peer_adk_a2a.py"), "client", f"--card={card}",
        f"--store={store}", f"--session={session}", *told,
    ]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, env=peer_env(), cwd=ROOT, timeout=BOUND_SECONDS
    )
    assert done.returncode == 0, f"ADK client exited {done.returncode}:\n{done.stderr[-3000:]}"
    lines = done.stdout.splitlines()
    events = [json.loads(line[6:]) for line in lines if line.startswith("EVENT ")]
    assert f'END {{"events": {len(events)}}}' in lines, done.stdout + done.stderr[-3000:]
    return events


async def cairn_turn(
    card: str, store: Path, session: str, *, say: str | None = None,
    answer: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """One turn of cairn's ``caller`` (the same source as ADK's, from cairn), in this
    process, its session in the SQLite file ``store``: what it yielded, normalized."""
    from cairn.runners import Runner
    from cairn.sessions.sqlite_session_service import SqliteSessionService

    caller = a2a_twins.caller("cairn", card)
    service = SqliteSessionService(store)
    runner = Runner(app_name=APP, agent=caller, session_service=service)
    found = await service.get_session(app_name=APP, user_id=USER, session_id=session)
    if found is None:
        found = await service.create_session(app_name=APP, user_id=USER, session_id=session)
    if say is not None:
        message = types.Content(role="user", parts=[types.Part(text=say)])
    else:
        call = pending_call([dumped(event) for event in found.events])
        assert call is not None, "no long-running call waits in the cairn client's session"
        reply = types.FunctionResponse(id=call["id"], name=call["name"], response=answer)
        message = types.Content(role="user", parts=[types.Part(function_response=reply)])
    seen = [
        dumped(event)
        async for event in runner.run_async(user_id=USER, session_id=session, new_message=message)
    ]
    await runner.close()
    return normalize_all(seen)
