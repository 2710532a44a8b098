"""The dev UI's graph node details, compact inbox, interrupt forms and keyboard navigation,
against the real server and headless Chromium."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect
from tests.web.conftest import Server
from tests.web.test_web_ui import open_app, send, wait_idle

Shot = Callable[[Page, str], Path]


def test_clicking_a_graph_node_shows_its_runs_attempts_errors_and_events(
    page: Page, server: Server, screenshot: Shot
) -> None:
    open_app(page, server, "pipeline")
    send(page, "seven")
    expect(page.locator(".node-output").filter(has_text="report@1")).to_contain_text(
        "13 characters"
    )
    wait_idle(page)
    page.click("[data-tab=graph]")
    graph = page.locator("#graph")
    expect(graph.locator('[data-node="fetch"]')).to_have_attribute("data-status", "completed")

    # The retried node: one failed attempt, then its output.
    graph.locator('[data-node="fetch"]').click()
    panel = page.locator("#node-panel")
    run = panel.locator('.node-run[data-path="pipeline@1/fetch@1"]')
    expect(run).to_have_attribute("data-status", "completed")
    expect(run.locator(".run-attempts")).to_have_text("2 attempts")
    expect(run.locator(".run-errors")).to_contain_text("ConnectionError: service busy for 'seven'")
    expect(run.locator(".run-input")).to_have_text("seven")
    expect(run.locator(".run-output")).to_have_text("fetched seven")
    expect(run.locator(".run-duration")).to_have_text(re.compile(r"^\d+(\.\d+)? (ms|s)$"))
    expect(run.locator(".run-event")).to_have_count(2)  # the error event and the output event
    screenshot(page, "graph-node-retried")

    # The nested workflow: its run, then the runs inside it, each with its input and output.
    graph.locator('[data-node="tidy"]').focus()
    page.keyboard.press("Enter")
    expect(panel.locator(".node-run")).to_have_count(3)
    expect(panel.locator(".node-run").nth(0)).to_have_attribute("data-path", "pipeline@1/tidy@1")
    clean = panel.locator('.node-run[data-path="pipeline@1/tidy@1/clean@1"]')
    expect(clean.locator(".run-input")).to_have_text("fetched seven")
    expect(clean.locator(".run-output")).to_have_text("FETCHED SEVEN")
    count = panel.locator('.node-run[data-path="pipeline@1/tidy@1/count@1"]')
    expect(count.locator(".run-input")).to_have_text("FETCHED SEVEN")
    expect(count.locator(".run-output")).to_have_text("13")
    expect(panel.locator(".node-run").nth(0).locator(".run-output")).to_have_text("13")
    screenshot(page, "graph-node-nested")

    # An event of a run opens in the timeline.
    event = count.locator(".run-event").first
    event_id = event.get_attribute("data-event-id")
    event.click()
    expect(page.locator('.tabs [data-tab="timeline"]')).to_have_class(re.compile(r"\bactive\b"))
    expect(page.locator(".event-row.selected")).to_have_attribute("data-event-id", str(event_id))
    expect(page.locator("#inspector .json-view")).to_contain_text("pipeline@1/tidy@1/count@1")
