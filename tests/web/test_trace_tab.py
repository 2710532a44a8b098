"""The Trace tab against the real server (which records spans, as `cairn web` does): the
waterfall of an invocation's spans, a failing tool's span shown as an error, what a model
call sent and got, and the invocation's and the session's totals."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.web.conftest import Server, _start_server

Shot = Callable[[Page, str], Path]
AGENTS = Path(__file__).resolve().parents[1] / "support" / "trace_agents"


@pytest.fixture(scope="module")
def trace_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from _start_server(tmp_path_factory.mktemp("trace-server"), CAIRN_AGENTS_DIR=str(AGENTS))


def open_weather(page: Page, server: Server) -> None:
    """Open the weather app for a new user, and wait until the page has taken both in (a
    message typed before that is not sent)."""
    user = f"u-{uuid.uuid4().hex[:8]}"
    page.goto(f"{server.url}/#weather/{user}")
    expect(page.locator("#app-select")).to_have_value("weather")
    expect(page.locator("#user-id")).to_have_value(user)


def ask(page: Page, text: str) -> None:
    page.fill("#message-input", text)
    page.press("#message-input", "Enter")
    expect(page.locator("#run-status")).to_have_class(re.compile(r"\bidle\b"))


def test_the_trace_tab_shows_an_invocations_spans_and_what_the_model_was_sent(
    trace_server: Server, page: Page, screenshot: Shot
) -> None:
    open_weather(page, trace_server)
    ask(page, "Weather in Hangzhou?")
    expect(page.locator(".msg.agent .bubble").last).to_have_text("It is 23°C in Hangzhou.")

    page.click("#trace-tab")
    rows = page.locator("#trace-waterfall .trace-row[data-span-id]")
    expect(rows).to_have_count(7)
    expect(rows.locator(".trace-name")).to_have_text(
        [
            "invocation",
            "invoke_agent weather",
            "chat scripted",
            "execute_tool get_weather",
            "chat scripted",
            "✕ execute_tool get_forecast",
            "chat scripted",
        ]
    )
    failed = page.locator('.trace-row[data-name="execute_tool get_forecast"]')
    expect(failed).to_have_class(re.compile(r"\berror\b"))
    expect(failed).to_have_attribute(
        "title", "RuntimeError: the forecast service for Hangzhou is down"
    )
    expect(page.locator(".trace-row.error")).to_have_count(1)
    invocation = page.locator("#trace-invocation-totals")
    expect(invocation.locator('[data-stat="tokens in"]')).to_contain_text("60")
    expect(invocation.locator('[data-stat="tokens out"]')).to_contain_text("12")
    expect(invocation.locator('[data-stat="model"]')).to_contain_text("3 calls")
    expect(invocation.locator('[data-stat="tools"]')).to_contain_text("2 calls")
    expect(invocation.locator('[data-stat="errors"]')).to_contain_text("1")

    rows.nth(6).click()
    detail = page.locator("#trace-detail")
    expect(detail.locator("#trace-system")).to_contain_text("Answer in one sentence.")
    sent = detail.locator("#trace-input .trace-message")
    expect(sent.locator(".trace-role")).to_have_text(
        ["user", "assistant", "tool", "assistant", "tool"]
    )
    expect(sent.nth(0)).to_contain_text("Weather in Hangzhou?")
    expect(sent.nth(1)).to_contain_text('get_weather({"city":"Hangzhou"})')
    expect(sent.nth(2)).to_contain_text('→ {"city":"Hangzhou","celsius":23}')
    expect(detail.locator("#trace-tools summary")).to_have_text(
        ["get_weather — Look up the weather.", "get_forecast — Look up tomorrow's weather."]
    )
    reply = detail.locator("#trace-output .trace-message")
    expect(reply.locator(".trace-role")).to_have_text("assistant · stop")
    expect(reply).to_contain_text("It is 23°C in Hangzhou.")
    expect(detail.locator(".trace-facts")).to_contain_text("finish reason")
    expect(detail.locator(".trace-facts")).to_contain_text("stop")
    expect(detail.locator(".trace-facts")).to_contain_text("30 / 6")
    screenshot(page, "trace-tab")

    failed.click()
    expect(detail.locator("#trace-error")).to_contain_text(
        "the forecast service for Hangzhou is down"
    )
    expect(detail.locator("#trace-arguments")).to_contain_text('"city": "Hangzhou"')

    ask(page, "And tomorrow?")
    expect(page.locator("#trace-invocation option")).to_have_count(2)
    session = page.locator("#trace-session-totals")
    expect(session.locator('[data-stat="tokens in"]')).to_contain_text("120")
    expect(session.locator('[data-stat="model"]')).to_contain_text("6 calls")
    # The newest invocation is shown; the first one stays a choice away.
    expect(invocation.locator('[data-stat="tokens in"]')).to_contain_text("60")
    page.select_option("#trace-invocation", index=1)
    expect(rows).to_have_count(7)


@pytest.fixture(scope="module")
def unrecorded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("unrecorded-server")
    yield from _start_server(directory, CAIRN_AGENTS_DIR=str(AGENTS), CAIRN_RECORD_SPANS="0")


def test_without_recording_the_tab_says_how_to_turn_it_on(
    unrecorded_server: Server, page: Page
) -> None:
    open_weather(page, unrecorded_server)
    ask(page, "Weather in Hangzhou?")
    page.click("#trace-tab")
    expect(page.locator("#trace-waterfall")).to_contain_text(
        "This server does not record spans. Start it with `cairn web`, or "
        "`cairn api-server --record-spans`."
    )
    expect(page.locator("#trace-invocation option")).to_have_count(0)
