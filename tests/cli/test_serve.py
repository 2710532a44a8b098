"""``cairn api-server`` and ``cairn web``: started for real on a free port, asked, stopped."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.support.waiting import BOUND_SECONDS, wait_until

from cairn.cli import main
from cairn.cli.serve import _environment


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=BOUND_SECONDS) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


@contextmanager
def serving(tmp_path: Path, command: str, *options: str) -> Iterator[tuple[str, Path]]:
    """``cairn COMMAND`` on a free port over a scaffolded agent; yields (base URL, log)."""
    agents = tmp_path / "agents"
    agents.mkdir()
    created = CliRunner().invoke(main, ["create", "weather_bot", "--dir", str(agents)])
    assert created.exit_code == 0, created.output
    port = _free_port()
    log = tmp_path / f"{command}.log"
    argv = [sys.executable, "-m", "cairn.cli", command, str(agents), "--port", str(port)]
    argv += ["--store", str(tmp_path / "sessions.db"), *options]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        assert process.poll() is None, log.read_text()
        try:
            _get(base + "/openapi.json")
            return True
        except (urllib.error.URLError, ConnectionError):
            return False

    try:
        wait_until(answers, f"cairn {command} answering GET {base}/openapi.json")
        yield base, log
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=BOUND_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_api_server_serves_the_agents(tmp_path: Path) -> None:
    with serving(tmp_path, "api-server") as (base, log):
        status, body, headers = _get(base + "/list-apps")
        assert status == 200
        assert json.loads(body) == ["weather_bot"]
        assert {k.lower() for k in headers} >= {"x-cairn-worker"}
        status, _, _ = _get(base + "/")
        assert status == 404  # no web UI
    output = log.read_text()
    assert f"cairn api-server: {base}" in output


def test_api_server_requires_the_api_key_it_was_given(tmp_path: Path) -> None:
    with serving(tmp_path, "api-server", "--api-key", "s3cret") as (base, _):
        assert _get(base + "/list-apps")[0] == 401
        assert _get(base + "/list-apps", {"X-API-Key": "s3cret"})[0] == 200


def test_web_serves_the_ui_and_prints_its_url(tmp_path: Path) -> None:
    with serving(tmp_path, "web") as (base, log):
        status, body, _ = _get(base + "/")
        assert status == 200
        assert b"<html" in body.lower()
        assert json.loads(_get(base + "/list-apps")[1]) == ["weather_bot"]
    assert f"open {base}/" in log.read_text()


def test_options_become_the_contracts_environment(tmp_path: Path) -> None:
    environment = _environment(
        web=True,
        path=tmp_path,
        store="memory://",
        artifact_store=str(tmp_path / "artifacts"),
        memory_store=str(tmp_path / "memory.db"),
        cors_origins=("http://a.test", "http://b.test"),
        api_key="k",
        max_body_bytes=10,
        lease_ttl=90.0,
        auto_create_session=True,
        record_spans=False,
    )
    assert environment == {
        "CAIRN_AGENTS_DIR": str(tmp_path.resolve()),
        "CAIRN_WEB": "1",
        "CAIRN_STORE": "memory://",
        "CAIRN_ARTIFACT_STORE": str(tmp_path / "artifacts"),
        "CAIRN_MEMORY_STORE": str(tmp_path / "memory.db"),
        "CAIRN_CORS_ORIGINS": "http://a.test,http://b.test",
        "CAIRN_API_KEY": "k",
        "CAIRN_MAX_BODY_BYTES": "10",
        "CAIRN_LEASE_TTL": "90.0",
        "CAIRN_AUTO_CREATE_SESSION": "1",
        "CAIRN_RECORD_SPANS": "0",
    }
    plain = _environment(
        web=False,
        path=tmp_path,
        store=None,
        artifact_store=None,
        memory_store=None,
        cors_origins=(),
        api_key=None,
        max_body_bytes=None,
        lease_ttl=None,
        auto_create_session=False,
    )
    assert plain == {"CAIRN_AGENTS_DIR": str(tmp_path.resolve()), "CAIRN_WEB": None}


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        (["--reload", "--workers", "2"], "--reload runs one process"),
        (["--store", "memory://", "--workers", "2"], "memory:// keeps sessions"),
        (["--port", "70000"], "70000"),
        (["--workers", "0"], "0"),
    ],
)
@pytest.mark.parametrize("command", ["api-server", "web"])
def test_bad_options_are_refused(
    tmp_path: Path, command: str, options: list[str], problem: str
) -> None:
    result = CliRunner().invoke(main, [command, str(tmp_path), *options])
    assert result.exit_code == 2
    assert problem in result.output


def test_a_missing_path_exits_1(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["api-server", str(tmp_path / "nope")])
    assert result.exit_code == 1
    assert "does not exist" in result.output


def test_workers_share_one_store(tmp_path: Path) -> None:
    with serving(tmp_path, "api-server", "--workers", "2") as (base, log):
        workers: set[str] = set()

        def both_answered() -> bool:
            status, _, headers = _get(base + "/list-apps")
            assert status == 200, log.read_text()
            workers.add({k.lower(): v for k, v in headers.items()}["x-cairn-worker"])
            return len(workers) == 2

        # Each request is a new connection, which either worker may accept once it is up;
        # a loaded machine only makes the second worker take longer to start.
        wait_until(both_answered, "both workers answering GET /list-apps (each its pid)")


@pytest.mark.parametrize("command", ["web", "api-server"])
def test_a_port_in_use_is_one_line_naming_it_and_no_url_first(tmp_path: Path, command: str) -> None:
    with socket.socket() as other_server:
        other_server.bind(("127.0.0.1", 0))
        other_server.listen()
        port = other_server.getsockname()[1]
        argv = [command, str(tmp_path), "--port", str(port), "--store", "memory://"]
        result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2
    assert result.stdout == ""  # no "open http://..." pointing at the other server
    assert result.stderr.splitlines() == [
        f"error: port {port} on 127.0.0.1 is already in use (another server listens there); "
        f"stop that server, or choose another port with --port, e.g. --port {port + 1}"
    ]


def test_a_host_that_is_not_this_machines_is_one_line(tmp_path: Path) -> None:
    argv = ["api-server", str(tmp_path), "--host", "192.0.2.1", "--store", "memory://"]
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "error: cannot listen on --host 192.0.2.1: it is not an address of this machine"
    ]


def test_a_port_taken_after_the_check_is_reported_the_same_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    import cairn.cli.serve as serve

    for name in ("CAIRN_AGENTS_DIR", "CAIRN_WEB", "CAIRN_STORE"):
        monkeypatch.delenv(name, raising=False)  # restored after the test: _serve sets them

    def failed_to_bind(*args: object, **kwargs: object) -> None:
        raise SystemExit(3)  # what uvicorn does when it cannot bind

    monkeypatch.setattr(serve, "_check_port", lambda host, port: None)
    monkeypatch.setattr(uvicorn, "run", failed_to_bind)
    with socket.socket() as other_server:
        other_server.bind(("127.0.0.1", 0))
        other_server.listen()
        port = other_server.getsockname()[1]
        argv = ["web", str(tmp_path), "--port", str(port), "--store", "memory://"]
        result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].startswith(
        f"error: port {port} on 127.0.0.1 is already in use"
    )
