"""The web UI end to end: the real server (uvicorn in a subprocess) and headless Chromium.

Debian's chromium is used as is (nothing is downloaded). Without it the tests skip on a
laptop and fail in CI (``CAIRN_REQUIRE_SERVICES=1``), like the database tests.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from tests.support.databases import service_unavailable
from tests.support.waiting import BOUND_SECONDS, wait_until

AGENTS = Path(__file__).resolve().parent / "agents"
FORECAST = Path(__file__).resolve().parents[1] / "support" / "eval_agents" / "forecast"
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
CHROMIUM = Path(os.environ.get("CAIRN_CHROMIUM", "/usr/bin/chromium"))
UVICORN = [sys.executable, "-m", "uvicorn", "--factory", "cairn.server:app_from_env"]
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class Server:
    url: str
    log: Path

    def client(self, api_key: str | None = None) -> httpx.Client:
        headers = {"X-API-Key": api_key} if api_key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=BOUND_SECONDS)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_server(directory: Path, **extra_env: str) -> Iterator[Server]:
    port = _free_port()
    # Only what the test gives: a CAIRN_* variable an earlier test in this worker process left
    # set (a CLI test's, say) must not change the server a later one starts.
    inherited = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("CAIRN_") or k.startswith(("CAIRN_TEST", "CAIRN_REQUIRE"))
    }
    env = {
        **inherited,
        "CAIRN_WEB": "1",
        "CAIRN_AGENTS_DIR": str(AGENTS),
        "CAIRN_STORE": str(directory / "sessions.db"),
        **extra_env,
    }
    log = directory / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*UVICORN, "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if process.poll() is not None:
            pytest.fail(f"the server exited:\n{log.read_text(errors='replace')}")
        try:
            return httpx.get(f"{url}/index.html", timeout=BOUND_SECONDS).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_until(answers, f"the server at {url} answering (log: {log})")
        yield Server(url=url, log=log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=BOUND_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def serving(directory: Path, **extra_env: str) -> Iterator[Server]:
    """A server on the store in ``directory`` while the block runs: for tests that stop a
    server (or see it die) and start another on the same store."""
    yield from _start_server(directory, **extra_env)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from _start_server(tmp_path_factory.mktemp("web-server"))


@pytest.fixture(scope="module")
def locked_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server that needs the API key ``open-sesame``."""
    yield from _start_server(tmp_path_factory.mktemp("locked-server"), CAIRN_API_KEY="open-sesame")


@pytest.fixture(scope="module")
def eval_agents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a copy of the ``forecast`` app: eval sets and results are written there."""
    agents = tmp_path_factory.mktemp("eval-agents")
    shutil.copytree(FORECAST, agents / "forecast")
    return agents


@pytest.fixture(scope="module")
def eval_server(tmp_path_factory: pytest.TempPathFactory, eval_agents: Path) -> Iterator[Server]:
    """A server of the apps in ``eval_agents``."""
    directory = tmp_path_factory.mktemp("eval-server")
    yield from _start_server(directory, CAIRN_AGENTS_DIR=str(eval_agents))


JWT_SECRET = "a-web-test-secret-that-is-long-enough"


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server that needs bearer tokens (JWT) signed with ``JWT_SECRET``."""
    yield from _start_server(tmp_path_factory.mktemp("token-server"), CAIRN_JWT_SECRET=JWT_SECRET)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        service_unavailable(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # launch() gives every run a fresh, temporary user-data directory.
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: object, request: pytest.FixtureRequest) -> Iterator[object]:
    """A page in a fresh context (its own localStorage); fails the test on a JavaScript error."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})  # type: ignore[attr-defined]
    from playwright.sync_api import expect

    # Bounds that only say when to give up (tests.support.waiting), for actions and expect().
    context.set_default_timeout(BOUND_SECONDS * 1000)
    expect.set_options(timeout=BOUND_SECONDS * 1000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    yield page
    context.close()
    allowed = getattr(request.node, "allowed_console_errors", ())
    unexpected = [e for e in errors if not any(a in e for a in allowed)]
    assert unexpected == [], f"JavaScript errors: {unexpected}"


@pytest.fixture
def screenshot() -> Callable[[object, str], Path]:
    """``screenshot(page, name)`` saves tests/web/screenshots/<name>.png and prints its path."""

    def save(page: object, name: str) -> Path:
        SCREENSHOTS.mkdir(exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path))  # type: ignore[attr-defined]
        print(f"screenshot: {path}")
        return path

    return save
