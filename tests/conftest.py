"""Shared test helpers.

``CAIRN_REQUIRE_SERVICES=1`` (set by ``.ci/run``) turns "server not available"
skips into failures, so CI always exercises the real databases.
"""

from __future__ import annotations

import os

import pytest

REQUIRE_SERVICES = os.environ.get("CAIRN_REQUIRE_SERVICES") == "1"


def service_unavailable(reason: str) -> None:
    """Skip the test on a laptop without the server; fail in CI."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{reason} (CAIRN_REQUIRE_SERVICES=1 requires it)")
    pytest.skip(reason)
