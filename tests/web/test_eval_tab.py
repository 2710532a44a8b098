"""The dev UI's Eval tab against the real server: a session becomes an eval case, the set
runs and passes; after the agent changes, the case fails and its divergence is shown.

The ``forecast`` app looks a city up with a tool; a ``city.txt`` in its folder makes it look
up that city instead, which is how the tests change its behaviour while the server runs.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.web.conftest import Server

Shot = Callable[[Page, str], Path]


@pytest.fixture
def override(eval_agents: Path) -> Iterator[Path]:
    """The file that changes the agent's behaviour; removed after the test."""
    path = eval_agents / "forecast" / "city.txt"
    yield path
    path.unlink(missing_ok=True)


def open_forecast(page: Page, server: Server) -> str:
    user = f"u-{uuid.uuid4().hex[:8]}"
    page.goto(f"{server.url}/#forecast/{user}")
    expect(page.locator("#app-select")).to_have_value("forecast")
    return user


def record_a_session(page: Page) -> str:
    page.fill("#message-input", "weather in Paris")
    page.press("#message-input", "Enter")
    expect(page.locator(".msg.agent .bubble").last).to_have_text("It is sunny in Paris.")
    expect(page.locator("#run-status")).to_have_text("idle")
    session = page.locator(".session-item.active")
    expect(session).to_have_count(1)
    session_id = session.get_attribute("data-session-id")
    assert session_id
    return session_id


def new_eval_set(page: Page) -> str:
    set_id = f"smoke_{uuid.uuid4().hex[:6]}"
    page.click("[data-tab=eval]")
    page.fill("#eval-new-set-id", set_id)
    page.click("#eval-new-set button[type=submit]")
    expect(page.locator("#eval-set-select")).to_have_value(set_id)
    return set_id


def test_a_session_added_to_a_new_set_runs_and_passes(
    page: Page, eval_server: Server, eval_agents: Path, screenshot: Shot
) -> None:
    open_forecast(page, eval_server)
    session_id = record_a_session(page)
    set_id = new_eval_set(page)
    expect(page.locator("#eval-add-session")).to_be_enabled()
    page.click("#eval-add-session")
    case = page.locator(".eval-case")
    expect(case).to_have_count(1)
    expect(case).to_have_attribute("data-eval-id", f"session_{session_id}")
    assert (eval_agents / "forecast" / f"{set_id}.evalset.json").is_file()

    page.click("#eval-run")
    row = page.locator(".eval-result")
    expect(row).to_have_attribute("data-status", "passed")
    expect(page.locator("#eval-run-status")).to_have_text("1 of 1 passed")
    expect(row.locator('[data-metric="tool_trajectory_avg_score"]')).to_have_text("1 / 1")
    expect(row.locator('[data-metric="response_match_score"]')).to_have_text("1 / 0.8")
    # The failing case (none here) or the first is opened: expected and actual agree.
    expect(page.locator("#eval-divergence")).to_have_text(
        "The run followed the recorded conversation."
    )
    for side in ("expected", "actual"):
        column = page.locator(f'.eval-invocation[data-index="0"] .eval-side.{side}')
        expect(column.locator(".eval-user")).to_contain_text("weather in Paris")
        expect(column.locator(".eval-call")).to_have_text(["weather(city=Paris)"])
        expect(column.locator(".eval-final")).to_have_text("It is sunny in Paris.")
    expect(page.locator(".diverged")).to_have_count(0)
    # The case ran in a new session of the server's store, which the session list shows.
    expect(page.locator(".session-item")).to_have_count(2)
    screenshot(page, "eval-passed")

    # The run was saved beside the agent, and can be shown again.
    saved = page.locator("#eval-history option")
    expect(saved).to_have_count(2)  # the prompt, and the one run
    page.select_option("#eval-history", index=1)
    expect(page.locator("#eval-run-status")).to_have_text("saved run: 1 of 1 passed")
    expect(page.locator(".eval-result")).to_have_attribute("data-status", "passed")
    expect(page.locator("#eval-divergence")).to_contain_text("A saved run keeps its scores")
    expect(page.locator(".eval-side.actual .eval-final")).to_have_text("It is sunny in Paris.")


def test_after_the_agent_changes_the_case_fails_and_shows_its_divergence(
    page: Page, eval_server: Server, override: Path, screenshot: Shot
) -> None:
    open_forecast(page, eval_server)
    record_a_session(page)
    new_eval_set(page)
    page.fill("#eval-case-id", "paris")
    page.click("#eval-add-session")
    expect(page.locator('.eval-case[data-eval-id="paris"]')).to_have_count(1)
    override.write_text("Rome")

    page.click('.eval-case[data-eval-id="paris"] .run-case')
    row = page.locator('.eval-result[data-eval-id="paris"]')
    expect(row).to_have_attribute("data-status", "failed")
    expect(page.locator("#eval-run-status")).to_have_text("0 of 1 passed")
    expect(row.locator('[data-metric="tool_trajectory_avg_score"]')).to_have_text("0 / 1")
    divergence = page.locator("#eval-divergence")
    expect(divergence).to_have_text(
        "First divergence: invocation 1, event 1: expected weather(city='Paris'), got "
        "weather(city='Rome')"
    )
    expect(divergence).to_have_attribute("data-kind", "tool_call")
    pair = page.locator('.eval-invocation[data-index="0"]')
    expect(pair.locator(".eval-side.expected .eval-call.diverged")).to_have_text(
        "weather(city=Paris)"
    )
    expect(pair.locator(".eval-side.actual .eval-call.diverged")).to_have_text("weather(city=Rome)")
    expect(pair.locator(".eval-side.actual .eval-final")).to_have_text("It is sunny in Rome.")
    expect(page.locator('.eval-case[data-eval-id="paris"] .eval-status')).to_have_text("failed")
    screenshot(page, "eval-divergence")

    # A lower bar for the trajectory lets the same run pass: the criteria are the run's.
    page.click("#eval-criteria summary")
    page.fill('[aria-label="threshold of tool_trajectory_avg_score"]', "0")
    page.locator('[aria-label="threshold of tool_trajectory_avg_score"]').dispatch_event("change")
    page.click("#eval-run")
    expect(row).to_have_attribute("data-status", "passed")
    expect(row.locator('[data-metric="tool_trajectory_avg_score"]')).to_have_text("0 / 0")
    # ... but the run still departs from the recording, and says where.
    expect(divergence).to_contain_text("expected weather(city='Paris'), got weather(city='Rome')")


def test_a_session_can_be_added_only_when_one_is_open(page: Page, eval_server: Server) -> None:
    open_forecast(page, eval_server)
    new_eval_set(page)
    expect(page.locator("#eval-add-session")).to_be_disabled()
    expect(page.locator(".eval-case")).to_have_count(0)
    expect(page.locator("#eval-run")).to_be_disabled()
