"""The dev UI's Runs tab against the real server in Chromium: a run started in the
background is listed, streams into the chat and ends done; a run queued behind it is
cancelled before it starts; a run clicked selects its invocation in the timeline.

The ``gate`` app's tool waits until the file its message names exists, so a test decides
when a run may end; every wait is on a condition the page shows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.web.conftest import Server, _start_server
from tests.web.test_web_ui import open_app

Shot = Callable[[Page, str], Path]
FAULT_AGENTS = Path(__file__).resolve().parents[1] / "server" / "fault_agents"


@pytest.fixture(scope="module")
def gate_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from _start_server(
        tmp_path_factory.mktemp("runs-web"), CAIRN_AGENTS_DIR=str(FAULT_AGENTS)
    )


def in_background(page: Page, text: str) -> None:
    page.fill("#message-input", text)
    page.click("#background")


def test_a_background_run_is_listed_ends_done_and_a_queued_one_is_cancelled(
    page: Page, gate_server: Server, tmp_path: Path, screenshot: Shot
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    user = open_app(page, gate_server, "gate")
    page.click('[data-tab="runs"]')
    expect(page.locator("#runs-view")).to_contain_text("Pick a session")

    in_background(page, str(first))
    runs = page.locator(".run-item")
    expect(runs).to_have_count(1)
    expect(runs.first).to_have_attribute("data-status", "running")
    # Its events come into the chat from its stream while the composer stays free.
    expect(page.locator(".chip.call")).to_contain_text("wait_for_release")
    expect(page.locator("#send")).to_be_enabled()

    # A second one waits its turn behind the first (enqueue), and is cancelled unstarted.
    in_background(page, str(second))
    expect(runs).to_have_count(2)
    queued = runs.first
    expect(queued).to_have_attribute("data-status", "pending")
    expect(queued.locator(".run-badge")).to_have_text("pending")
    expect(queued).to_contain_text(str(second))
    expect(page.locator("#runs-active")).to_have_text("2")  # beside the tab's name
    screenshot(page, "runs-queued")
    queued.locator(".run-cancel").click()
    expect(queued).to_have_attribute("data-status", "cancelled")
    expect(queued.locator(".run-cancel")).to_have_count(0)
    expect(page.locator("#runs-active")).to_have_text("1")

    # The first ends once released: the list, read again while it runs, says done.
    running = runs.nth(1)
    expect(running.locator(".run-cancel")).to_be_visible()
    first.touch()
    expect(running).to_have_attribute("data-status", "done")
    expect(page.locator("#runs-active")).to_have_text("")
    expect(running).to_contain_text("started")
    expect(running).to_contain_text("ended")
    expect(page.locator(".msg.agent .bubble").last).to_have_text("released")
    screenshot(page, "runs-done")

    # The server agrees; the cancelled run never started, so its message is not in the log.
    sid = page.locator(".session-item.active").get_attribute("data-session-id")
    base = f"/cairn/apps/gate/users/{user}/sessions/{sid}"
    with gate_server.client() as client:
        listed = client.get(base + "/runs").json()["runs"]
        events = client.get(base + "/events").json()["events"]
    assert [r["status"] for r in listed] == ["cancelled", "done"]
    assert listed[0].get("startedAt") is None
    texts = [p.get("text") for e in events for p in (e.get("content") or {}).get("parts", [])]
    assert str(first) in texts and str(second) not in texts

    # A run clicked: its invocation's first event is selected in the timeline.
    running.click()
    expect(page.locator('[data-body="timeline"]')).to_be_visible()
    selected = page.locator(".event-row.selected")
    expect(selected).to_have_count(1)
    first_event = next(e for e in events if e["invocationId"] == listed[1]["runId"])
    expect(selected).to_have_attribute("data-event-id", first_event["id"])
