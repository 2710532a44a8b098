"""The dev UI against the real server: streaming, interrupts, rewind, fork, sessions, API key
and bearer token.

Each test works as its own user, so the tests share one server without seeing each
other's sessions. Screenshots go to tests/web/screenshots/.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import jwt
import pytest
from playwright.sync_api import Page, expect
from tests.web.conftest import JWT_SECRET, Server

Shot = Callable[[Page, str], Path]


def open_app(page: Page, server: Server, app: str) -> str:
    user = f"u-{uuid.uuid4().hex[:8]}"
    page.goto(f"{server.url}/#{app}/{user}")
    expect(page.locator("#app-select")).to_have_value(app)
    expect(page.locator("#user-id")).to_have_value(user)
    return user


def send(page: Page, text: str) -> None:
    page.fill("#message-input", text)
    page.press("#message-input", "Enter")


def wait_idle(page: Page) -> None:
    expect(page.locator("#run-status")).to_have_class(re.compile(r"\b(idle|waiting)\b"))


def test_a_reply_streams_in_and_its_events_show_in_the_timeline(
    page: Page, server: Server, screenshot: Shot
) -> None:
    open_app(page, server, "assistant")
    send(page, "hi")
    # The reply arrives in parts: a live bubble holds a prefix before the whole text is in.
    live = page.locator(".msg.streaming .bubble")
    expect(live).to_be_visible()
    partial = live.inner_text()
    assert partial and "hi." not in partial, partial
    screenshot(page, "chat-streaming")

    final = page.locator(".msg.agent:not(.streaming) .bubble")
    expect(final).to_have_text("Hello there, you said: hi.")
    expect(page.locator(".msg.streaming")).to_have_count(0)
    wait_idle(page)
    expect(page.locator(".msg.user .bubble")).to_have_text("hi")
    # A new session was made for the message and is listed.
    expect(page.locator(".session-item")).to_have_count(1)

    rows = page.locator(".event-row")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_have_attribute("data-kind", "message")
    expect(rows.nth(1)).to_have_attribute("data-kind", "reply")
    expect(rows.nth(1).locator(".ev-author")).to_have_text("assistant")
    rows.nth(1).click()
    inspector = page.locator("#inspector")
    expect(inspector.locator(".json-view")).to_contain_text('"author": "assistant"')
    diff = inspector.locator('tr[data-scope="session"][data-key="last_reply"]')
    expect(diff.locator(".before")).to_have_text("—")
    expect(diff.locator(".after")).to_have_text('"Hello there, you said: hi."')
    screenshot(page, "chat-event-inspector")


def test_a_tool_confirmation_is_answered_from_the_inbox(
    page: Page, server: Server, screenshot: Shot
) -> None:
    open_app(page, server, "assistant")
    send(page, "pay Ann")
    card = page.locator(".interrupt-card")
    expect(card).to_have_attribute("data-kind", "confirmation")
    expect(card).to_contain_text("pay(amount=40, to='Ann')")
    expect(page.locator("#run-status")).to_have_text("waiting for you")
    screenshot(page, "confirmation-pending")

    card.locator("button.approve").click()
    expect(page.locator(".msg.agent .bubble").last).to_have_text("Done: {'paid': 40}.")
    expect(page.locator("#inbox")).to_be_hidden()
    wait_idle(page)
    # The tool's user-scope write shows in its event's state diff.
    # (the first tool result is the placeholder ADK writes while the call waits)
    page.locator('.event-row[data-kind="tool result"]').last.click()
    diff = page.locator('#inspector tr[data-scope="user"][data-key="paid_total"]')
    expect(diff.locator(".after")).to_have_text("40")
    page.click("[data-tab=state]")
    expect(page.locator('[data-scope="user"] tr[data-key="paid_total"]')).to_contain_text("40")
    screenshot(page, "confirmation-answered")


def test_the_email_review_waits_for_a_review_and_completes(
    page: Page, server: Server, screenshot: Shot
) -> None:
    open_app(page, server, "email_review")
    expect(page.locator("#app-kind")).to_have_text("workflow")
    send(page, "the quarterly report is ready for everyone to read")
    card = page.locator(".interrupt-card")
    expect(card).to_have_attribute("data-kind", "input")
    expect(card).to_contain_text("Please review the draft")
    expect(card.locator(".payload")).to_contain_text("the quarterly report is ready")

    page.click("[data-tab=graph]")
    graph = page.locator("#graph")
    expect(graph.locator('[data-node="draft_from_template"]')).to_have_attribute(
        "data-status", "completed"
    )
    expect(graph.locator('[data-node="request_review"]')).to_have_attribute(
        "data-status", "waiting"
    )
    expect(graph.locator('[data-node="send_email"]')).to_have_attribute("data-status", "idle")
    screenshot(page, "email-review-waiting")

    # Feedback loops back to drafting; then approve.
    card.locator("textarea").fill("mention the Friday deadline")
    card.locator("button[type=submit]").click()
    expect(
        page.locator(".node-output pre").filter(has_text="(Revised: mention the Friday")
    ).to_have_count(1)
    card = page.locator(".interrupt-card")
    expect(card).to_contain_text("request_review@2")  # the second review
    expect(card).to_have_count(1)
    expect(graph.locator('[data-node="request_review"]')).to_have_attribute(
        "data-status", "waiting"
    )
    card.locator("textarea").fill("approve")
    card.locator("button[type=submit]").click()

    expect(page.locator(".node-output").filter(has_text="send_email@1")).to_contain_text("SENT:")
    expect(page.locator("#inbox")).to_be_hidden()
    wait_idle(page)
    page.click("[data-tab=graph]")
    for node in ("draft_from_template", "request_review", "handle_review", "send_email"):
        expect(graph.locator(f'[data-node="{node}"]')).to_have_attribute("data-status", "completed")
    expect(graph.locator('[data-node="discard"]')).to_have_attribute("data-status", "idle")
    screenshot(page, "email-review-done")


def test_a_schema_form_answers_a_structured_input_request(
    page: Page, server: Server, screenshot: Shot
) -> None:
    open_app(page, server, "intake")
    send(page, "the printer")
    card = page.locator(".interrupt-card")
    expect(card).to_contain_text("Describe the ticket for: the printer")
    card.locator('input[name="title"]').fill("Printer jams")
    card.locator('select[name="priority"]').select_option(label="urgent")
    card.locator('input[name="hours"]').fill("2.5")
    card.locator("button[type=submit]").click()
    expect(card.locator(".form-error")).to_contain_text("whole number")  # checked before sending
    card.locator('input[name="hours"]').fill("3")
    card.locator('input[name="billable"]').check()
    screenshot(page, "schema-form")
    card.locator("button[type=submit]").click()
    expect(page.locator(".node-output").filter(has_text="file_ticket@1")).to_contain_text(
        "Filed 'Printer jams' (urgent, 3 h, billable)"
    )
    expect(page.locator("#inbox")).to_be_hidden()


def test_rewind_strikes_through_the_taken_back_events_and_restores_state(
    page: Page, server: Server, screenshot: Shot
) -> None:
    open_app(page, server, "assistant")
    send(page, "first")
    expect(page.locator(".msg.agent .bubble").last).to_have_text("Hello there, you said: first.")
    wait_idle(page)
    send(page, "second")
    expect(page.locator(".msg.agent .bubble").last).to_have_text("Hello there, you said: second.")
    wait_idle(page)
    page.click("[data-tab=state]")
    last_reply = page.locator('[data-scope="session"] tr[data-key="last_reply"]')
    expect(last_reply).to_contain_text("you said: second.")

    page.click("[data-tab=timeline]")
    second = page.locator(".invocation").nth(1)
    second.locator("button.rewind").click()
    expect(second.locator(".event-row.rewound")).to_have_count(2)
    expect(page.locator(".invocation").nth(0).locator(".event-row.rewound")).to_have_count(0)
    summary = second.locator(".event-row .ev-summary").first
    assert "line-through" in summary.evaluate("e => getComputedStyle(e).textDecorationLine")
    expect(page.locator(".msg.rewound")).to_have_count(2)  # the chat strikes them through too
    expect(page.locator(".event-row").last).to_have_attribute("data-kind", "rewind")
    screenshot(page, "rewound")

    page.click("[data-tab=state]")
    expect(last_reply).to_contain_text("you said: first.")
    # The rewind event's own diff shows the restore.
    page.click("[data-tab=timeline]")
    page.locator('.event-row[data-kind="rewind"]').click()
    diff = page.locator('#inspector tr[data-key="last_reply"]')
    expect(diff.locator(".before")).to_contain_text("second")
    expect(diff.locator(".after")).to_contain_text("first")


def test_fork_new_delete_and_paged_sessions(page: Page, server: Server, screenshot: Shot) -> None:
    user = open_app(page, server, "assistant")
    send(page, "one")
    wait_idle(page)
    send(page, "two")
    expect(page.locator(".msg.agent .bubble").last).to_have_text("Hello there, you said: two.")
    wait_idle(page)
    expect(page.locator(".event-row")).to_have_count(4)

    # Fork at the first reply: a new session with the first two events.
    page.locator(".event-row").nth(1).hover()
    page.locator(".event-row").nth(1).locator("button.fork").click()
    expect(page.locator(".session-item")).to_have_count(2)
    expect(page.locator(".event-row")).to_have_count(2)
    expect(page.locator(".msg.agent .bubble")).to_have_text(["Hello there, you said: one."])
    forked = page.locator(".session-item.active").get_attribute("data-session-id")
    assert forked and forked in page.url

    page.click("#new-session")
    expect(page.locator(".session-item")).to_have_count(3)
    expect(page.locator(".event-row")).to_have_count(0)

    item = page.locator(f'.session-item[data-session-id="{forked}"]')
    item.hover()
    item.locator("button.delete").click()
    expect(item.locator("button.delete")).to_have_text("Delete?")
    item.locator("button.delete").click()
    expect(page.locator(".session-item")).to_have_count(2)

    # Paging: 40 more sessions, listed 30 at a time, newest first.
    with server.client() as client:
        for n in range(40):
            response = client.post(
                f"/apps/assistant/users/{user}/sessions", json={"sessionId": f"bulk-{n:02}"}
            )
            assert response.status_code == 200, response.text
    page.reload()
    expect(page.locator("#session-total")).to_have_text("42")
    expect(page.locator(".session-item")).to_have_count(30)
    expect(page.locator(".session-item").first).to_have_attribute("data-session-id", "bulk-39")
    page.click("#more-sessions")
    expect(page.locator(".session-item")).to_have_count(42)
    expect(page.locator("#more-sessions")).to_be_hidden()
    screenshot(page, "sessions")


def test_an_api_key_is_asked_for_on_401_and_remembered(
    page: Page, locked_server: Server, request: pytest.FixtureRequest
) -> None:
    request.node.allowed_console_errors = ("401",)
    page.goto(f"{locked_server.url}/#assistant/ann")
    form = page.locator("#key-form")
    expect(form).to_be_visible()
    expect(page.locator("#key-message")).to_have_text("This server needs an API key.")

    page.fill("#api-key", "wrong")
    page.click("#key-form button[type=submit]")
    expect(page.locator("#key-message")).to_contain_text("refused")

    page.fill("#api-key", "open-sesame")
    page.click("#key-form button[type=submit]")
    expect(form).to_be_hidden()
    expect(page.locator("#app-select option[value=assistant]")).to_have_count(1)
    send(page, "hello")
    expect(page.locator(".msg.agent .bubble").last).to_have_text("Hello there, you said: hello.")

    page.reload()  # the key is kept in localStorage
    expect(page.locator(".session-item")).to_have_count(1)
    expect(form).to_be_hidden()


def test_a_bearer_token_is_asked_for_when_the_server_wants_one(
    page: Page, token_server: Server, request: pytest.FixtureRequest
) -> None:
    request.node.allowed_console_errors = ("401", "403", "not those of user 'ann'")
    page.goto(f"{token_server.url}/#assistant/ann")
    form = page.locator("#key-form")
    expect(form).to_be_visible()
    expect(page.locator("#key-message")).to_have_text("This server needs a bearer token.")
    expect(page.locator("#key-kind")).to_have_value("bearer")

    def use_token(user: str) -> None:
        claims = {"sub": user, "exp": time.time() + 600}
        page.fill("#api-key", jwt.encode(claims, JWT_SECRET, algorithm="HS256"))
        page.click("#key-form button[type=submit]")

    use_token("bob")  # bob's token does not open ann's sessions: the server says why
    expect(page.locator(".toast.error").first).to_contain_text("not those of user 'ann'")
    page.click("#key-toggle")
    expect(page.locator("#key-message")).to_contain_text("A bearer token is saved")
    use_token("ann")
    expect(form).to_be_hidden()
    expect(page.locator("#app-select option[value=assistant]")).to_have_count(1)
    send(page, "hello")
    expect(page.locator(".msg.agent .bubble").last).to_have_text("Hello there, you said: hello.")
    page.reload()  # the token is kept, as a bearer token
    expect(page.locator(".session-item")).to_have_count(1)
    expect(form).to_be_hidden()


def test_a_pending_review_is_announced_beside_the_chat_input(
    page: Page, server: Server, screenshot: Shot
) -> None:
    open_app(page, server, "email_review")
    notice = page.locator("#pending-notice")
    send(page, "the quarterly report is ready for everyone to read")
    expect(page.locator(".interrupt-card")).to_have_count(1)
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("1 interrupt is still waiting for your answer")
    expect(notice).to_contain_text("input request: “Please review the draft")
    expect(notice).to_contain_text("A message you send now starts a new run")
    wait_idle(page)

    # A second message starts a second run with its own review; the notice counts both.
    send(page, "the budget is cut by 10%")
    cards = page.locator(".interrupt-card")
    expect(page.locator("#inbox .inbox-item")).to_have_count(2)  # listed; one form open
    expect(cards).to_have_count(1)
    expect(notice).to_contain_text("2 interrupts are still waiting for your answer")
    wait_idle(page)
    before = page.url
    notice.get_by_role("link", name="Answer them in the inbox").click()
    expect(cards.first.locator("textarea")).to_be_focused()
    assert page.url == before  # the address still names the session
    screenshot(page, "pending-notice")

    # The first review sends the first draft; the second keeps waiting, and is announced.
    expect(cards.first.locator(".payload")).to_contain_text("the quarterly report")
    cards.first.locator("textarea").fill("approve")
    cards.first.locator("button[type=submit]").click()
    sent = page.locator(".node-output").filter(has_text="send_email")
    expect(sent).to_have_count(1)
    expect(sent).to_contain_text("the quarterly report is ready")
    expect(cards).to_have_count(1)
    expect(notice).to_contain_text("1 interrupt is still waiting for your answer")
    expect(notice.get_by_role("link", name="Answer it in the inbox")).to_be_visible()

    cards.first.locator("textarea").fill("approve")
    cards.first.locator("button[type=submit]").click()
    expect(sent).to_have_count(2)
    expect(sent.last).to_contain_text("the budget is cut by 10%")
    expect(notice).to_be_hidden()
