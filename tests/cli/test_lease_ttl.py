"""``--lease-ttl`` (and ``CAIRN_LEASE_TTL``), through the real CLI: the TTL reaches the lease,
and a process killed while it holds a session does not lock it for that TTL: the next run, on
the same host, finds the holder gone and takes over at once."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from tests.cli.harness import AGENTS
from tests.support.waiting import BOUND_SECONDS, wait_until

WAIT_LIMIT = 60.0
HOUR = 3600.0
INTERRUPT = {"multitaskStrategy": "interrupt"}


def cairn(*args: str, env: dict[str, str] | None = None, **popen: Any) -> subprocess.Popen[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    return subprocess.Popen(
        [sys.executable, "-m", "cairn.cli", *args],
        env={**environment, "NO_COLOR": "1", **(env or {})},
        text=True,
        **popen,
    )


def wait_for_file(path: Path, process: subprocess.Popen[str]) -> None:
    def appeared() -> bool:
        assert process.poll() is None, f"the process exited early ({process.returncode})"
        return path.exists()

    wait_until(appeared, f"{path} appears")


def lease_row(store: Path) -> tuple[str, str, float]:
    """(session id, holder, seconds left) of the store's one held lease."""
    with closing(sqlite3.connect(store)) as db:
        ((session_id, holder, expires_at),) = db.execute(
            "SELECT session_id, holder, expires_at FROM cairn_leases WHERE holder != ''"
        ).fetchall()
    return session_id, holder, expires_at - time.time()


def kill(process: subprocess.Popen[str]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait(timeout=WAIT_LIMIT) == -signal.SIGKILL


def test_cairn_run_takes_over_a_session_whose_holder_was_killed(tmp_path: Path) -> None:
    store, inside = tmp_path / "sessions.db", tmp_path / "inside"
    agent = str(AGENTS / "stall.py")
    first = cairn(
        "run", agent, "--store", str(store), "--lease-ttl", str(HOUR),
        env={"STALL_INSIDE": str(inside)}, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    assert first.stdin is not None
    first.stdin.write("stall\n")
    first.stdin.flush()
    wait_for_file(inside, first)
    session_id, holder, left = lease_row(store)
    assert f":{first.pid}:" in holder
    assert left > HOUR - 600  # the flag's TTL, not the default 30 s
    kill(first)

    # The dead holder's lease has an hour left; the next run does not wait for it.
    second = cairn(
        "run", agent, "--store", str(store), "--session", session_id, "--lease-ttl", str(HOUR),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    out, err = second.communicate("hello\n", timeout=WAIT_LIMIT)
    assert second.returncode == 0, err
    assert "stall: ok" in out and "busy" not in out + err


def test_cairn_run_refuses_a_lease_ttl_that_is_not_positive(tmp_path: Path) -> None:
    refused = cairn(
        "run", str(AGENTS / "stall.py"), "--store", str(tmp_path / "s.db"), "--lease-ttl", "0",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    _, err = refused.communicate(timeout=WAIT_LIMIT)
    assert refused.returncode == 2 and "--lease-ttl" in err


@contextmanager
def api_server(
    agents: Path, store: Path, port: int, *options: str, env: dict[str, str]
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    log = (agents.parent / f"server-{port}.log").open("w")
    server = cairn(
        "api-server", str(agents), "--port", str(port), "--store", str(store), *options,
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:

        def answers() -> bool:
            assert server.poll() is None, (agents.parent / f"server-{port}.log").read_text()
            try:
                urllib.request.urlopen(base + "/list-apps", timeout=BOUND_SECONDS).close()
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                return False
            return True

        wait_until(answers, "the server answers")
        yield base, server
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=BOUND_SECONDS)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        log.close()


def post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=WAIT_LIMIT) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def run_body(session_id: str, text: str) -> dict[str, Any]:
    return {
        "appName": "stall",
        "userId": "u",
        "sessionId": session_id,
        "newMessage": {"role": "user", "parts": [{"text": text}]},
    }


def stall_in_background(base: str, session_id: str) -> None:
    def send() -> None:
        with contextlib.suppress(OSError):  # the server is killed under the request
            post(base + "/run", run_body(session_id, "stall"))

    threading.Thread(target=send, daemon=True).start()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_api_server_takes_over_a_session_whose_server_was_killed(tmp_path: Path) -> None:
    agents, store, inside = tmp_path / "agents", tmp_path / "sessions.db", tmp_path / "inside"
    (agents / "stall").mkdir(parents=True)
    shutil.copy(AGENTS / "stall.py", agents / "stall" / "agent.py")
    env = {"STALL_INSIDE": str(inside)}
    with api_server(agents, store, free_port(), "--lease-ttl", str(HOUR), env=env) as (base, srv):
        assert post(base + "/apps/stall/users/u/sessions/s", {})[0] == 200
        stall_in_background(base, "s")
        wait_for_file(inside, srv)
        session_id, holder, left = lease_row(store)
        assert session_id == "s" and f":{srv.pid}:" in holder and left > HOUR - 600
        kill(srv)

    inside.unlink()
    env = {**env, "CAIRN_LEASE_TTL": str(HOUR)}  # the setting, from the environment this time
    with api_server(agents, store, free_port(), env=env) as (base, srv):
        # The new server resumes the killed server's run (it stalls again): interrupting
        # it, the next run gets the session at once, not after the killed holder's TTL.
        wait_for_file(inside, srv)
        status, events = post(base + "/run", {**run_body("s", "hello"), **INTERRUPT})
        assert status == 200, events  # not 409: the killed server's lease is freed at once
        assert events[-1]["content"]["parts"][0]["text"] == "ok"
        inside.unlink()
        assert post(base + "/apps/stall/users/u/sessions/t", {})[0] == 200
        stall_in_background(base, "t")
        wait_for_file(inside, srv)
        _, holder, left = lease_row(store)
        assert f":{srv.pid}:" in holder and left > HOUR - 600
        kill(srv)
