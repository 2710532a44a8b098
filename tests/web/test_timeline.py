"""A long session in the dev UI: it opens on its newest page, older events load on scroll, a
new turn's rows are added, filters and search find old events with their state diffs
(computed by the server), and the timeline is driven from the keyboard.

The session is seeded straight into the server's SQLite store (tests/support/long_sessions.py).
"""

from __future__ import annotations

import asyncio
import re
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import Locator, Page, expect
from tests.support.long_sessions import event_id, seed_long_session
from tests.web.conftest import Server
from tests.web.test_web_ui import send, wait_idle

from cairn.sessions.sqlite_session_service import SqliteSessionService

EVENTS = 3000  # 750 turns of four events
PAGE = 50  # the UI's page size (session_log.js)


def seed(server: Server, count: int = EVENTS) -> str:
    """A user with one session, ``long``, of ``count`` events; returns the user id."""
    user = f"u-{uuid.uuid4().hex[:8]}"

    async def store() -> None:
        service = SqliteSessionService(server.log.parent / "sessions.db")
        try:
            await seed_long_session(
                service, app_name="assistant", user_id=user, session_id="long", count=count
            )
        finally:
            await service.close()

    # Playwright's sync API runs an event loop in this thread: store from another one.
    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, store()).result()
    return user


def row(page: Page, index: int) -> Locator:
    return page.locator(f'#timeline .event-row[data-event-id="{event_id(index)}"]')


@pytest.fixture
def long_session(page: Page, server: Server) -> list[str]:
    """The page open on a seeded long session; the URLs the page asked the server for."""
    user = seed(server)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(f"{server.url}/#assistant/{user}/long")
    expect(row(page, EVENTS - 1)).to_be_visible()
    wait_idle(page)
    return asked


def test_a_long_session_opens_on_its_newest_page_and_loads_older_on_scroll(
    page: Page, server: Server, long_session: list[str]
) -> None:
    rows = page.locator("#timeline .event-row")
    expect(rows).to_have_count(PAGE)
    expect(rows.first).to_have_attribute("data-event-id", event_id(EVENTS - PAGE))
    expect(page.locator(".msg.agent .bubble").last).to_have_text("answer 750")
    # The server's state diff marks the reply's changes (turns, last_topic, user:visits).
    expect(row(page, EVENTS - 1).locator(".ev-state")).to_have_text("Δ3")
    assert not [url for url in long_session if "/events" in url]  # the log was not read whole

    page.locator("#timeline").evaluate("box => { box.scrollTop = 0; }")
    expect(rows).to_have_count(2 * PAGE)
    expect(rows.first).to_have_attribute("data-event-id", event_id(EVENTS - 2 * PAGE))
    # The rows that were in view stay in view: the timeline did not jump to the top.
    assert page.locator("#timeline").evaluate("box => box.scrollTop") > 0
    page.locator("#messages").evaluate("box => { box.scrollTop = 0; }")
    first_turn = (EVENTS - 3 * PAGE + 3) // 4 + 1  # the first whole turn in the window
    expect(page.locator(".msg.user .bubble").first).to_have_text(f"question {first_turn}")
    expect(rows).to_have_count(3 * PAGE)


def test_a_new_turn_is_appended_and_only_what_is_new_is_fetched(
    page: Page, server: Server, long_session: list[str]
) -> None:
    rows = page.locator("#timeline .event-row")
    expect(rows).to_have_count(PAGE)
    asked_before = len(long_session)
    send(page, "hi")
    expect(page.locator(".msg.agent:not(.streaming) .bubble").last).to_have_text(
        "Hello there, you said: hi."
    )
    wait_idle(page)
    expect(rows).to_have_count(PAGE + 2)
    expect(rows.nth(PAGE)).to_have_attribute("data-kind", "message")
    expect(rows.nth(PAGE + 1)).to_have_attribute("data-kind", "reply")
    expect(rows.first).to_have_attribute("data-event-id", event_id(EVENTS - PAGE))
    # The reply's state change arrived with the catch-up page: computed by the server.
    rows.nth(PAGE + 1).click()
    diff = page.locator('#inspector tr[data-scope="session"][data-key="last_reply"]')
    expect(diff.locator(".after")).to_have_text('"Hello there, you said: hi."')
    timeline_calls = [url for url in long_session[asked_before:] if "/timeline" in url]
    assert timeline_calls and all("cursor=" in url for url in timeline_calls), timeline_calls


def test_filters_and_search_find_an_old_event_and_show_its_state_diff(
    page: Page, server: Server, long_session: list[str]
) -> None:
    # Turn 12's call, by kind, node and the text of its arguments.
    page.select_option("#timeline-kind", "tool call")
    page.fill("#timeline-node", "lookup")
    page.fill("#timeline-search", 'topic-12"')
    rows = page.locator("#timeline .event-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-event-id", event_id(45))
    expect(page.locator("#timeline-status")).to_contain_text("1 match")

    # The reply of turn 12: "answer 12" also matches turns 120 to 129.
    page.select_option("#timeline-kind", "reply")
    page.fill("#timeline-node", "")
    page.fill("#timeline-search", "answer 12")
    expect(rows).to_have_count(11)
    old = row(page, 47)
    old.click()
    inspector = page.locator("#inspector")
    expect(inspector.locator(".json-view")).to_contain_text('"text": "answer 12"')
    turns = inspector.locator('tr[data-scope="session"][data-key="turns"]')
    expect(turns.locator(".before")).to_have_text("11")
    expect(turns.locator(".after")).to_have_text("12")
    topic = inspector.locator('tr[data-scope="session"][data-key="last_topic"]')
    expect(topic.locator(".before")).to_have_text('"topic-11"')

    # An author filter alone pages through the user's messages, newest first.
    page.select_option("#timeline-kind", "")
    page.fill("#timeline-search", "")
    page.fill("#timeline-author", "user")
    expect(rows).to_have_count(PAGE)
    expect(rows.last).to_have_attribute("data-event-id", event_id(EVENTS - 4))
    page.locator("#timeline").focus()
    page.keyboard.press("Escape")  # the inspector closes
    page.keyboard.press("Escape")  # then the search is cleared
    expect(page.locator("#timeline-author")).to_have_value("")
    expect(rows).to_have_count(PAGE)
    expect(rows.first).to_have_attribute("data-event-id", event_id(EVENTS - PAGE))


def test_the_timeline_is_driven_from_the_keyboard(
    page: Page, server: Server, long_session: list[str]
) -> None:
    page.locator("body").press("/")
    search = page.locator("#timeline-search")
    expect(search).to_be_focused()
    search.fill("answer 75")  # turns 75 and 750 ...
    page.keyboard.press("ArrowDown")  # into the results
    current = page.locator("#timeline .event-row.current")
    expect(current).to_have_count(1)
    first = current.get_attribute("data-event-id")
    page.keyboard.press("j")
    expect(current).not_to_have_attribute("data-event-id", first or "")
    page.keyboard.press("k")
    expect(current).to_have_attribute("data-event-id", first or "")
    page.keyboard.press("Enter")
    inspector = page.locator("#inspector")
    expect(inspector).to_be_visible()
    expect(inspector.locator(".json-view")).to_contain_text(f'"id": "{first}"')
    page.keyboard.press("Escape")
    expect(inspector).to_be_hidden()
    page.keyboard.press("Escape")
    expect(search).to_have_value("")
    # Back on the window: ↑ from the newest row moves up, Enter opens it.
    page.keyboard.press("ArrowUp")
    expect(current).to_have_attribute("data-event-id", event_id(EVENTS - 1))
    page.keyboard.press("ArrowUp")
    expect(current).to_have_attribute("data-event-id", event_id(EVENTS - 2))
    page.keyboard.press("Enter")
    expect(inspector.locator("strong").first).to_have_text(re.compile("tool result"))
