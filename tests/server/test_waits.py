"""No server, CLI, web UI or A2A test hangs on machine speed: no sleeps, no short timeouts.

Tests wait on readiness with ``tests.support.waiting`` (a generous bound that only says
when to give up); a request's timeout is that bound too. Apps under test (``agents``
directories) may poll as they like: they are the code under test, not the test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
FILES = sorted(
    path
    for folder in ("server", "cli", "web", "a2a")
    for path in (TESTS / folder).rglob("*.py")
    if not any(part.endswith("agents") for part in path.relative_to(TESTS).parts)
)
SLEEP = re.compile(r"\bsleep\(")
NUMBER_TIMEOUT = re.compile(r"\btimeout=\d")
HTTP_CALL = re.compile(
    r"httpx\.(?:Client|AsyncClient|get|post|put|patch|delete|request|stream)\("
    r"(?:[^()]|\([^()]*\))*\)"
)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(TESTS)))
def test_waits_are_on_conditions_with_a_generous_bound(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert not SLEEP.findall(source), "poll with tests.support.waiting instead of sleeping"
    assert not NUMBER_TIMEOUT.findall(source), "use timeout=BOUND_SECONDS (tests.support)"
    for call in HTTP_CALL.findall(source):
        if "transport=" not in call:  # an in-process ASGI client has no network to wait on
            assert "timeout=" in call, f"httpx's default 5 s timeout: {call}"
