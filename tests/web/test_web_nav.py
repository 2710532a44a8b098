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


def session_id(page: Page) -> str:
    return page.locator(".session-item.active").get_attribute("data-session-id") or ""


def test_several_pauses_wait_in_a_compact_inbox_answered_one_after_another(
    page: Page, server: Server, screenshot: Shot
) -> None:
    user = open_app(page, server, "desk")
    send(page, "pay, ask the manager, and check the weather")
    items = page.locator("#inbox .inbox-item")
    expect(items).to_have_count(3)
    expect(items.nth(0)).to_have_attribute("data-kind", "long_running")
    expect(items.nth(0).locator(".what")).to_contain_text("ask_manager(request=")
    expect(items.nth(1)).to_have_attribute("data-kind", "confirmation")
    expect(items.nth(1).locator(".what")).to_contain_text("pay(amount=40, to='Ann')")
    expect(items.nth(1).locator(".where")).to_have_text("pay")
    expect(items.nth(2)).to_have_attribute("data-kind", "credential")
    expect(items.nth(2).locator(".where")).to_have_text("weather")
    # One form at a time; the chat keeps most of its room and stays scrollable.
    expect(page.locator("#inbox .interrupt-card")).to_have_count(1)
    expect(items.nth(0).locator(".inbox-summary")).to_have_attribute("aria-expanded", "true")
    chat = page.locator(".chat").bounding_box()
    box = page.locator("#inbox").bounding_box()
    messages = page.locator("#messages").bounding_box()
    assert chat and box and messages
    assert box["height"] <= 0.45 * chat["height"] + 1, (box, chat)
    assert messages["height"] >= 0.3 * chat["height"], (messages, chat)
    screenshot(page, "inbox-three-pending")

    # Open another: the first folds.
    items.nth(2).locator(".inbox-summary").click()
    expect(items.nth(2).locator(".inbox-summary")).to_have_attribute("aria-expanded", "true")
    expect(items.nth(0).locator(".inbox-summary")).to_have_attribute("aria-expanded", "false")
    expect(page.locator("#inbox .interrupt-card")).to_have_count(1)
    expect(items.nth(2).locator(".interrupt-card")).to_have_attribute("data-kind", "credential")

    # The long-running call's answer is its result; then the next pause opens by itself.
    items.nth(0).locator(".inbox-summary").click()
    card = items.nth(0).locator(".interrupt-card")
    expect(card).to_contain_text("Waiting for a long-running tool")
    card.locator("textarea").fill("approved by Maria")
    card.locator("button[type=submit]").click()
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_have_attribute("data-kind", "confirmation")
    expect(items.nth(0).locator(".inbox-summary")).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#inbox .interrupt-card button.approve")).to_be_focused()
    page.locator("#inbox .interrupt-card button.approve").click()

    # The last one is the credential form: an API key field, not raw JSON.
    card = page.locator("#inbox .interrupt-card")
    expect(card).to_have_attribute("data-kind", "credential")
    expect(page.locator("#inbox .inbox-item")).to_have_count(0)
    key = card.locator('input[type="password"]')
    expect(card).to_contain_text("API key (sent in header X-Api-Key)")
    card.locator("button[type=submit]").click()
    expect(card.locator(".form-error")).to_have_text("Enter the API key.")
    key.fill("sk-test-secret-789")
    screenshot(page, "inbox-credential-form")
    card.locator("button[type=submit]").click()
    reply = page.locator(".msg.agent .bubble").last
    expect(reply).to_contain_text('"key_ends": "789"')
    expect(page.locator("#inbox")).to_be_hidden()
    wait_idle(page)
    with server.client() as client:
        stored = client.get(f"/apps/desk/users/{user}/sessions/{session_id(page)}").text
    assert "approved by Maria" in stored
    assert "sk-test-secret-789" not in stored  # the key answered the call, but is not in the log


def test_keyboard_moves_between_sessions_and_tabs_and_never_fires_while_typing(
    page: Page, server: Server, screenshot: Shot
) -> None:
    user = open_app(page, server, "assistant")
    with server.client() as client:
        for _ in range(2):
            client.post(f"/apps/assistant/users/{user}/sessions", json={})
    page.reload()
    items = page.locator(".session-item")
    expect(items).to_have_count(2)
    expect(page.locator("#session-list")).to_have_attribute("role", "listbox")
    expect(items.nth(0)).to_have_attribute("role", "option")

    # ] and [ (or Alt+arrows) walk the list; the selected one is marked for screen readers.
    page.locator("body").press("]")
    expect(items.nth(0)).to_have_class(re.compile(r"\bactive\b"))
    expect(items.nth(0)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("]")
    expect(items.nth(1)).to_have_class(re.compile(r"\bactive\b"))
    expect(items.nth(0)).to_have_attribute("aria-selected", "false")
    page.keyboard.press("Alt+ArrowUp")
    expect(items.nth(0)).to_have_class(re.compile(r"\bactive\b"))
    second = items.nth(1).get_attribute("data-session-id")
    expect(page).not_to_have_url(re.compile(str(second)))

    # Digits switch tabs; the tab says it is selected.
    page.keyboard.press("2")
    state_tab = page.locator('.tabs [data-tab="state"]')
    expect(state_tab).to_have_class(re.compile(r"\bactive\b"))
    expect(state_tab).to_have_attribute("aria-selected", "true")
    expect(page.locator('[data-body="state"]')).to_be_visible()
    page.keyboard.press("1")
    expect(page.locator('.tabs [data-tab="timeline"]')).to_have_attribute("aria-selected", "true")

    # c focuses the message box; keys typed there are text, not shortcuts.
    page.keyboard.press("c")
    expect(page.locator("#message-input")).to_be_focused()
    page.keyboard.type("]2?i")
    page.keyboard.press("Alt+ArrowDown")
    expect(page.locator("#message-input")).to_have_value("]2?i")
    expect(items.nth(0)).to_have_class(re.compile(r"\bactive\b"))
    expect(page.locator("#keys-help")).to_be_hidden()
    page.fill("#message-input", "")

    # Tab and Enter reach and open sessions and tabs; Esc from there returns to the message box.
    items.nth(1).focus()
    page.keyboard.press("Enter")
    expect(items.nth(1)).to_have_class(re.compile(r"\bactive\b"))
    state_tab.focus()
    page.keyboard.press("Enter")
    expect(state_tab).to_have_class(re.compile(r"\bactive\b"))
    page.keyboard.press("Escape")
    expect(page.locator("#message-input")).to_be_focused()

    # ? lists every shortcut, Esc closes it.
    page.locator("#message-input").blur()
    page.keyboard.press("?")
    help_box = page.locator("#keys-help [role=dialog]")
    expect(help_box).to_be_visible()
    for text in ("previous session", "next session", "write a message", "the inbox", "State tab"):
        expect(help_box).to_contain_text(text)
    expect(help_box).to_contain_text("search the timeline")
    screenshot(page, "keyboard-help")
    page.keyboard.press("Escape")
    expect(page.locator("#keys-help")).to_be_hidden()


def test_i_jumps_to_the_inbox_answer_form(page: Page, server: Server) -> None:
    open_app(page, server, "assistant")
    page.locator("body").press("i")
    expect(page.locator(".toast")).to_contain_text("Nothing is waiting for an answer.")
    send(page, "pay Ann")
    expect(page.locator(".interrupt-card")).to_have_attribute("data-kind", "confirmation")
    wait_idle(page)
    page.locator("#message-input").blur()
    page.keyboard.press("i")
    expect(page.locator(".interrupt-card button.approve")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".msg.agent .bubble").last).to_have_text("Done: {'paid': 40}.")


def test_a_node_that_did_not_run_says_so(page: Page, server: Server) -> None:
    open_app(page, server, "email_review")
    send(page, "the report is ready")
    expect(page.locator(".interrupt-card")).to_have_attribute("data-kind", "input")
    wait_idle(page)
    page.click("[data-tab=graph]")
    page.locator('#graph [data-node="send_email"]').click()
    panel = page.locator("#node-panel")
    expect(panel).to_contain_text("send_email did not run in this invocation.")
    page.locator('#graph [data-node="request_review"]').click()
    run = panel.locator('.node-run[data-path$="/request_review@1"]')
    expect(run).to_have_attribute("data-status", "waiting")
    expect(run.locator(".run-duration")).to_have_text("—")  # still waiting: no end yet
    expect(run.locator(".run-input")).to_contain_text("the report is ready")
    panel.get_by_role("button", name="close node details").click()
    expect(panel).to_be_hidden()
