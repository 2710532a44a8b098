"""Each parity app gives the same normalized events, model requests and state on cairn as on
google-adk 2.13.0 (tests/parity/drive.py runs it; ADK in its own venv).

An app where cairn differs today is a strict xfail naming the difference (cases.DIFFERS);
when a fix makes it match, the mark fails: delete the entry.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from tests.parity import harness
from tests.parity.cases import DIFFERS, FEATURES

REQUIRE_SERVICES = os.environ.get("CAIRN_REQUIRE_SERVICES") == "1"


@pytest.fixture(scope="session")
def adk_results() -> Any:
    try:
        python = harness.adk_python(install=True)
    except RuntimeError as error:
        reason = f"google-adk 2.13.0's venv cannot be made: {error}"
        if REQUIRE_SERVICES:
            pytest.fail(f"{reason} (CAIRN_REQUIRE_SERVICES=1 requires it)")
        pytest.skip(reason)
    return harness.run_driver(python, "adk")


@pytest.fixture(scope="session")
def cairn_results() -> Any:
    return harness.run_driver(sys.executable, "cairn")


def test_every_app_has_a_feature() -> None:
    assert sorted(FEATURES) == harness.app_names()
    assert set(DIFFERS) <= set(FEATURES)


@pytest.mark.parametrize(
    "app",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=DIFFERS[name]))
        if name in DIFFERS
        else name
        for name in sorted(FEATURES)
    ],
)
def test_same_as_adk(app: str, adk_results: Any, cairn_results: Any) -> None:
    adk, cairn = adk_results[app], cairn_results[app]
    assert "driver_error" not in adk and "load_error" not in adk, adk
    assert adk == cairn, (
        f"{app} ({FEATURES[app]}) differs from google-adk 2.13.0 "
        f"first at {harness.first_difference(adk, cairn)}\n{harness.diff(adk, cairn)}"
    )
