"""Interrupt forms against servers of their own: the interrupted-invocation and in-doubt
forms for real (a tool kills its server process mid-call, a second server opens the same
store, the UI continues the invocation and resolves the call), and an OAuth2 sign-in."""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect
from tests.auth.token_server import FakeProvider
from tests.support.waiting import BOUND_SECONDS, wait_until
from tests.web.conftest import serving

Shot = Callable[[Page, str], Path]
AGENTS = Path(__file__).resolve().parent / "crash_agents"


def lease_expiry(store: Path, session_id: str) -> float:
    with sqlite3.connect(store) as db:
        row = db.execute(
            "SELECT expires_at FROM cairn_leases WHERE session_id = ?", (session_id,)
        ).fetchone()
    return float(row[0]) if row else 0.0


def refuses(url: str) -> bool:
    try:
        httpx.get(f"{url}/index.html", timeout=BOUND_SECONDS)
    except httpx.TransportError:
        return True
    return False


@pytest.mark.parametrize("choice", ["record", "rerun"])
def test_a_call_cut_off_by_a_crash_is_continued_and_resolved_from_the_ui(
    page: Page, tmp_path: Path, request: pytest.FixtureRequest, screenshot: Shot, choice: str
) -> None:
    """``record``: the result checked by hand is recorded and the tool never runs again;
    ``rerun``: the tool runs a second time, because the user said so."""
    # The first server dies mid-call: the page's stream breaks (an error it reports).
    request.node.allowed_console_errors = ("network", "Failed to fetch", "ERR_", "stream")
    runs = tmp_path / "runs.txt"
    env = {
        "CAIRN_AGENTS_DIR": str(AGENTS),
        "CAIRN_LEASE_TTL": "1",
        "CAIRN_TEST_LEDGER_RUNS": str(runs),
    }
    user = f"u-{uuid.uuid4().hex[:8]}"
    with serving(tmp_path, **env) as first:
        session = httpx.post(
            f"{first.url}/apps/ledger/users/{user}/sessions", json={}, timeout=BOUND_SECONDS
        ).json()["id"]
        page.goto(f"{first.url}/#ledger/{user}/{session}")
        expect(page.locator(".session-item.active")).to_have_count(1)
        page.fill("#message-input", "move 5")
        page.press("#message-input", "Enter")
        wait_until(lambda: refuses(first.url), "the first server to die inside the tool")
    assert runs.read_text() == "transfer 5\n"

    # Its lease lapses (CAIRN_LEASE_TTL=1 s, as stored); a second server takes over.
    store = tmp_path / "sessions.db"
    wait_until(
        lambda: time.time() > lease_expiry(store, session), "the dead server's lease to expire"
    )
    with serving(tmp_path, **env) as second:
        # The second server takes the dead server's run over and continues it at once
        # (cairn.runs): not idempotent, the call is asked about instead of run again.
        page.goto(f"{second.url}/#ledger/{user}/{session}")
        card = page.locator(".interrupt-card")
        expect(card).to_have_attribute("data-kind", "in_doubt")
        expect(card).to_contain_text("A call may or may not have run")
        expect(card).to_contain_text("transfer(amount=5)")
        if choice == "rerun":
            card.get_by_role("button", name="Run it again").click()
            expect(page.locator(".msg.agent .bubble").last).to_have_text("Moved: {'moved': 5}.")
            expect(page.locator("#inbox")).to_be_hidden()
            assert runs.read_text() == "transfer 5\ntransfer 5\n"  # run again, as asked
            return
        card.locator("button[type=submit]").click()  # nothing typed: nothing is recorded
        expect(card.locator(".form-error")).to_contain_text("Enter what the call returned")
        card.locator("textarea").fill("{not json")
        card.locator("button[type=submit]").click()
        expect(card.locator(".form-error")).to_contain_text("not valid JSON")
        card.locator("textarea").fill('{"moved": 5, "checked": "by hand"}')
        screenshot(page, "in-doubt-card")
        card.locator("button[type=submit]").click()
        expect(page.locator(".msg.agent .bubble").last).to_contain_text(
            "Moved: {'moved': 5, 'checked': 'by hand'}."
        )
        expect(page.locator("#inbox")).to_be_hidden()
    assert runs.read_text() == "transfer 5\n"  # recorded, never run twice


OAUTH_AGENTS = Path(__file__).resolve().parents[1] / "server" / "oauth_agents"


def test_an_oauth2_credential_request_signs_in_from_its_form(
    page: Page, tmp_path: Path, request: pytest.FixtureRequest, screenshot: Shot
) -> None:
    # The server stops when the test ends, maybe while the page still refreshes its lists.
    request.node.allowed_console_errors = ("Failed to fetch", "ERR_CONNECTION_REFUSED")
    with FakeProvider().running() as provider:
        provider.client_secret = f"cs-{uuid.uuid4().hex}"
        provider.token_tag = f"-{uuid.uuid4().hex}"
        env = {
            "CAIRN_AGENTS_DIR": str(OAUTH_AGENTS),
            "CAIRN_TEST_OAUTH": provider.base_url,
            "CAIRN_TEST_OAUTH_SECRET": provider.client_secret,
        }
        user = f"u-{uuid.uuid4().hex[:8]}"
        with serving(tmp_path, **env) as server:
            page.goto(f"{server.url}/#calendar/{user}")
            expect(page.locator("#app-select")).to_have_value("calendar")
            page.fill("#message-input", "monday?")
            page.press("#message-input", "Enter")
            card = page.locator(".interrupt-card")
            expect(card).to_have_attribute("data-kind", "credential")
            sign_in = card.get_by_role("link", name="Sign in")
            auth_uri = sign_in.get_attribute("href") or ""
            assert auth_uri.startswith(f"{provider.base_url}/authorize?")
            assert provider.client_secret not in auth_uri
            # The long sign-in address in what it asks wraps inside the card.
            assert card.evaluate("c => c.scrollWidth <= c.clientWidth")
            screenshot(page, "oauth2-credential-form")
            # The user signs in at the provider, which sends them back with a code.
            redirected = provider.authorize(auth_uri)
            card.locator('input[type="url"]').fill(redirected)
            card.locator("button[type=submit]").click()
            reply = page.locator(".msg.agent .bubble").last
            expect(reply).to_contain_text('"token_ends"')
            expect(reply).to_contain_text(f'"token_ends": "{provider.issued[0][-6:]}"')
            expect(page.locator("#inbox")).to_be_hidden()
            expect(page.locator("#run-status")).to_have_text("idle")
            session = page.locator(".session-item.active").get_attribute("data-session-id")
            stored = httpx.get(
                f"{server.url}/apps/calendar/users/{user}/sessions/{session}", timeout=BOUND_SECONDS
            ).text
    for secret in (provider.client_secret, *provider.issued):
        assert secret not in stored
