"""``/docs`` and ``/redoc`` in Chromium with every request outside the server refused: the
pages render the API's operations from the server's own files (issue 19, part 4)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Route, expect
from tests.web.conftest import Server

Shot = Callable[[Page, str], Path]


@pytest.fixture
def offline(page: Page) -> list[str]:
    """Refuses every request that does not go to this machine; returns the refused URLs."""
    refused: list[str] = []

    def only_local(route: Route) -> None:
        if urlsplit(route.request.url).hostname in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort("internetdisconnected")

    page.route("**/*", only_local)
    return refused


def test_swagger_ui_renders_and_runs_the_operations_offline(
    page: Page, locked_server: Server, offline: list[str], screenshot: Shot
) -> None:
    page.goto(f"{locked_server.url}/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("cairn")
    operations = page.locator(".opblock")
    expect(operations.filter(has_text="/list-apps")).to_have_count(1)
    assert operations.count() >= 20
    health = operations.filter(has_text="/health")
    health.locator(".opblock-summary").click()  # ADK's probe, open without the key
    health.get_by_role("button", name="Try it out").click()
    health.get_by_role("button", name="Execute").click()
    answer = health.locator(".live-responses-table tbody tr").first
    expect(answer.locator(".response-col_status")).to_have_text("200")
    expect(answer.locator("pre.microlight").first).to_contain_text('"status": "ok"')
    screenshot(page, "api-docs-swagger-offline")
    assert offline == [], f"the page asked for files outside the server: {offline}"


def test_redoc_renders_the_operations_offline(
    page: Page,
    locked_server: Server,
    offline: list[str],
    screenshot: Shot,
    request: pytest.FixtureRequest,
) -> None:
    # ReDoc's footer logo is on its maker's CDN: the page's policy refuses it without a
    # request, and Chromium says so on the console.
    request.node.allowed_console_errors = ("cdn.redoc.ly/redoc/logo-mini.svg",)
    page.goto(f"{locked_server.url}/redoc")
    expect(page.locator("h1").first).to_contain_text("cairn")
    expect(page.get_by_text("The server is up", exact=False).first).to_be_attached()
    expect(page.locator("[data-section-id^='tag/']").first).to_be_attached()
    screenshot(page, "api-docs-redoc-offline")
    assert offline == [], f"the page asked for files outside the server: {offline}"
