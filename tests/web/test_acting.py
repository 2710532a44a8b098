"""Acting on a session from the dev UI, against the real server in Chromium: editing state,
artifacts (list, preview, download, upload), stopping a run, session names and fork lineage.

Each test works as its own user, so the tests share one server without seeing each
other's sessions. Screenshots go to tests/web/screenshots/.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.web.conftest import Server, _start_server
from tests.web.test_web_ui import open_app, send, wait_idle

from cairn.sessions import SqliteSessionService
from cairn.sessions.lease import SessionLease

Shot = Callable[[Page, str], Path]
FAULT_AGENTS = Path(__file__).resolve().parents[1] / "server" / "fault_agents"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
)


@pytest.fixture(scope="module")
def gate_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server of the ``gate`` app: its tool waits until the file its message names exists."""
    yield from _start_server(
        tmp_path_factory.mktemp("gate-web"), CAIRN_AGENTS_DIR=str(FAULT_AGENTS)
    )


def new_session(server: Server, app: str, user: str, session_id: str, **body: object) -> None:
    with server.client() as client:
        response = client.post(
            f"/apps/{app}/users/{user}/sessions", json={"sessionId": session_id, **body}
        )
        assert response.status_code == 200, response.text


def open_session(page: Page, server: Server, app: str, user: str, session_id: str) -> None:
    page.goto(f"{server.url}/#{app}/{user}/{session_id}")
    expect(page.locator(".session-item.active")).to_have_attribute("data-session-id", session_id)


def hold_lease(server: Server, user: str, session_id: str) -> None:
    """Take the session's lease as a run would, in the server's own SQLite file."""

    async def take() -> None:
        async with SqliteSessionService(server.log.parent / "sessions.db") as store:
            held = await store.acquire_session_lease(
                app_name="assistant", user_id=user, session_id=session_id, holder="a-run", ttl=600
            )
            assert isinstance(held, SessionLease)

    # Playwright's sync API runs a loop in this thread: the store gets a thread of its own.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, take()).result()


def test_state_is_edited_added_and_removed_per_scope_as_events(
    page: Page, server: Server, screenshot: Shot
) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    new_session(server, "assistant", user, "s", state={"mood": "calm", "count": 1})
    open_session(page, server, "assistant", user, "s")
    page.click("[data-tab=state]")
    session = page.locator('#state-view section[data-scope="session"]')
    expect(session.locator('tr[data-key="count"]')).to_contain_text("1")

    # Edit a value: invalid JSON is refused in the form, nothing is sent.
    session.locator('tr[data-key="count"] button.edit-key').click()
    field = session.locator("textarea.state-value-input")
    field.fill("{not json")
    session.locator("form.state-form button[type=submit]").click()
    expect(session.locator(".form-error")).to_contain_text("Not valid JSON")
    expect(page.locator(".event-row")).to_have_count(0)
    field.fill('{"n": 2, "tags": ["a"]}')
    session.locator("form.state-form button[type=submit]").click()
    expect(session.locator('tr[data-key="count"] pre')).to_contain_text('"tags"')
    expect(session.locator("form.state-form")).to_have_count(0)

    # Add a user: key under the user scope, and remove a session key.
    user_scope = page.locator('#state-view section[data-scope="user"]')
    user_scope.locator("button.add-key").click()
    user_scope.locator("input.state-key-input").fill("theme")
    user_scope.locator("textarea.state-value-input").fill('"dark"')
    user_scope.locator("form.state-form button[type=submit]").click()
    expect(user_scope.locator('tr[data-key="theme"]')).to_contain_text("dark")
    app_scope = page.locator('#state-view section[data-scope="app"]')
    banner = f"banner-{user}"
    app_scope.locator("button.add-key").click()
    app_scope.locator("input.state-key-input").fill(f"app:{banner}")
    app_scope.locator("form.state-form button[type=submit]").click()
    expect(app_scope.locator(".form-error")).to_contain_text("Leave out the prefix")
    app_scope.locator("input.state-key-input").fill(banner)
    app_scope.locator("textarea.state-value-input").fill("[1, 2]")
    app_scope.locator("form.state-form button[type=submit]").click()
    expect(app_scope.locator(f'tr[data-key="{banner}"]')).to_contain_text("1")
    remove = session.locator('tr[data-key="mood"] button.remove-key')
    remove.click()
    expect(remove).to_have_text("Remove?")
    remove.click()
    expect(session.locator('tr[data-key="mood"]')).to_have_count(0)
    screenshot(page, "state-edited")
    app_scope.locator(f'tr[data-key="{banner}"] button.remove-key').click()
    app_scope.locator(f'tr[data-key="{banner}"] button.remove-key').click()
    expect(app_scope.locator(f'tr[data-key="{banner}"]')).to_have_count(0)

    # Each change is an event in the timeline, with its diff.
    page.click("[data-tab=timeline]")
    rows = page.locator(".event-row")
    expect(rows).to_have_count(5)
    expect(rows.nth(0)).to_have_attribute("data-kind", "state")
    rows.nth(3).click()
    removed = page.locator('#inspector tr[data-scope="session"][data-key="mood"]')
    expect(removed).to_have_class(re.compile("removed"))
    with server.client() as client:
        state = client.get(f"/apps/assistant/users/{user}/sessions/s").json()["state"]
        verified = client.get(f"/cairn/apps/assistant/users/{user}/sessions/s/verify").json()
    assert state == {"count": {"n": 2, "tags": ["a"]}, "user:theme": "dark"}
    assert verified["ok"] is True


def test_an_edit_while_a_run_holds_the_session_says_so_and_saves_nothing(
    page: Page, server: Server, request: pytest.FixtureRequest
) -> None:
    request.node.allowed_console_errors = ("409 (Conflict)",)
    user = f"u-{uuid.uuid4().hex[:8]}"
    new_session(server, "assistant", user, "busy", state={"a": 1})
    open_session(page, server, "assistant", user, "busy")
    hold_lease(server, user, "busy")
    page.click("[data-tab=state]")
    row = page.locator('#state-view section[data-scope="session"] tr[data-key="a"]')
    row.locator("button.edit-key").click()
    page.locator("textarea.state-value-input").fill("2")
    page.locator("form.state-form button[type=submit]").click()
    expect(page.locator("form.state-form .form-error")).to_contain_text("a run holds it")
    with server.client() as client:
        session = client.get(f"/apps/assistant/users/{user}/sessions/busy").json()
    assert session["state"] == {"a": 1} and session["events"] == []


def test_artifacts_are_uploaded_previewed_and_downloaded(
    page: Page, server: Server, screenshot: Shot, request: pytest.FixtureRequest
) -> None:
    request.node.allowed_console_errors = ("status of 413",)
    user = f"u-{uuid.uuid4().hex[:8]}"
    new_session(server, "assistant", user, "files")
    open_session(page, server, "assistant", user, "files")
    page.click("[data-tab=artifacts]")
    view = page.locator("#artifacts-view")
    expect(view.locator(".artifact-list")).to_contain_text("No artifacts yet")

    def upload(
        name: str, mime: str, data: bytes, *, as_name: str = "", user_scope: bool = False
    ) -> None:
        view.locator("input.upload-file").set_input_files(
            {"name": name, "mimeType": mime, "buffer": data}
        )
        view.locator("input.upload-name").fill(as_name)
        view.locator("input.upload-user-scope").set_checked(user_scope)
        view.locator("form.artifact-upload button[type=submit]").click()

    upload("notes.txt", "text/plain", b"first draft")
    expect(view.locator(".artifact-text")).to_have_text("first draft")
    upload("notes.txt", "text/plain", b"second draft")
    notes = view.locator('.artifact[data-filename="notes.txt"]')
    expect(notes.locator("button.version")).to_have_text(["v0", "v1"])
    expect(view.locator(".artifact-text")).to_have_text("second draft")
    upload("data.json", "application/json", b'{"b":[1,2],"a":true}')
    expect(view.locator('.artifact-text[data-format="json"]')).to_contain_text('"b": [\n    1,')
    upload("dot.png", "image/png", PNG, user_scope=True)
    picture = view.locator(".artifact-image")
    expect(picture).to_be_visible()
    assert picture.evaluate("img => img.decode().then(() => img.naturalWidth)") == 2
    expect(view.locator('.artifact[data-filename="user:dot.png"] .badge')).to_have_text("user")
    upload("blob.bin", "application/octet-stream", bytes(range(256)) * 4, as_name="raw.bin")
    expect(view.locator(".artifact-binary")).to_contain_text(
        "raw.bin · application/octet-stream · 1.0 KB"
    )
    screenshot(page, "artifacts")

    # A file over the server's body limit is refused in the form, and nothing is saved.
    upload("huge.bin", "application/octet-stream", bytes(800_000))
    error = view.locator("form.artifact-upload .form-error")
    expect(error).to_contain_text("huge.bin (781.3 KB) is too large for this server")
    expect(view.locator('.artifact[data-filename="huge.bin"]')).to_have_count(0)

    # Any version downloads with its bytes.
    notes.locator('button.version[data-version="0"]').click()
    expect(view.locator(".artifact-text")).to_have_text("first draft")
    with page.expect_download() as downloaded:
        view.locator("a.download").click()
    assert downloaded.value.suggested_filename == "notes.txt"
    assert Path(downloaded.value.path()).read_bytes() == b"first draft"

    # Each upload is an event naming the version, as a tool's save is.
    page.click("[data-tab=timeline]")
    expect(page.locator(".event-row")).to_have_count(5)
    with server.client() as client:
        events = client.get(f"/apps/assistant/users/{user}/sessions/files").json()["events"]
    assert [e["actions"]["artifactDelta"] for e in events] == [
        {"notes.txt": 0},
        {"notes.txt": 1},
        {"data.json": 0},
        {"user:dot.png": 0},
        {"raw.bin": 0},
    ]


def test_a_session_is_named_renamed_and_a_fork_links_to_its_parent(
    page: Page, server: Server, screenshot: Shot
) -> None:
    open_app(page, server, "assistant")
    send(page, "plan a trip to Lisbon")
    wait_idle(page)
    item = page.locator(".session-item").first
    expect(item.locator(".session-name")).to_have_text("plan a trip to Lisbon")
    expect(page.locator("#session-title")).to_have_text("plan a trip to Lisbon")
    expect(page.locator("#session-head")).to_have_text(re.compile(r"^plan a trip to Lisbon✎$"))
    parent = item.get_attribute("data-session-id")

    page.click("button.rename")
    page.fill("input.rename-input", "Lisbon trip")
    page.press("input.rename-input", "Enter")
    expect(page.locator("#session-title")).to_have_text("Lisbon trip")
    expect(page.locator(f'.session-item[data-session-id="{parent}"] .session-name')).to_have_text(
        "Lisbon trip"
    )

    # Fork at the first event: the fork says where it came from and links back.
    first = page.locator(".event-row").first
    first_id = first.get_attribute("data-event-id")
    first.hover()
    first.locator("button.fork").click()
    expect(page.locator(".session-item")).to_have_count(2)
    fork = page.locator(".session-item.active")
    expect(fork.locator(".lineage")).to_contain_text("forked from Lisbon trip")
    expect(page.locator(".chat-head .lineage")).to_contain_text(f"at event {first_id[:8]}")
    screenshot(page, "session-names")
    page.locator(".chat-head .lineage a.parent-link").click()
    expect(page.locator(".session-item.active")).to_have_attribute("data-session-id", parent)
    expect(page.locator("#session-title")).to_have_text("Lisbon trip")

    # An empty name goes back to the first message; the name survives a reload.
    page.click("button.rename")
    page.fill("input.rename-input", "")
    page.press("input.rename-input", "Enter")
    expect(page.locator("#session-title")).to_have_text("plan a trip to Lisbon")
    page.reload()
    expect(page.locator(".session-item.active .session-name")).to_have_text("plan a trip to Lisbon")


def test_a_running_invocation_is_stopped_and_continued(
    page: Page, gate_server: Server, tmp_path: Path, screenshot: Shot
) -> None:
    flag = tmp_path / "release"
    open_app(page, gate_server, "gate")
    send(page, str(flag))
    # The tool waits for the flag: the run streams on, and Stop is offered.
    expect(page.locator(".chip.call")).to_contain_text("wait_for_release")
    expect(page.locator("#run-status")).to_have_text("running")
    stop = page.locator("#stop")
    expect(stop).to_be_visible()
    screenshot(page, "stop-offered")
    stop.click()
    expect(page.locator("#run-status")).to_have_text("waiting for you")
    expect(stop).to_be_hidden()
    card = page.locator(".interrupt-card")
    expect(card).to_have_attribute("data-kind", "interrupted")

    # What it committed stays, and nothing more comes: nothing runs it any more.
    sid = page.locator(".session-item.active").get_attribute("data-session-id")
    base = f"/cairn/apps/gate/users/{page.locator('#user-id').input_value()}/sessions/{sid}"
    with gate_server.client() as client:
        assert client.get(base + "/invocations/running").json() == {"invocationIds": []}
        kept = client.get(base + "/events").json()["events"]
    assert kept[-1]["content"]["parts"][0]["functionCall"]["name"] == "wait_for_release"
    screenshot(page, "stopped")

    # Continued: the call it stopped in is in doubt; run again (the flag is there now).
    card.locator("button[type=submit]").click()
    doubt = page.locator('.interrupt-card[data-kind="in_doubt"]')
    expect(doubt).to_be_visible()
    flag.touch()
    doubt.get_by_role("button", name="Run it again").click()
    expect(page.locator(".msg.agent .bubble").last).to_have_text("released")
    wait_idle(page)
    expect(page.locator("#inbox")).to_be_hidden()
