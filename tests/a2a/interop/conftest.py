"""Fixtures of tests/a2a/interop: google-adk's venv, and google-adk talking to itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.a2a.interop import harness
from tests.a2a.interop.conversations import Exchange, adk_to_adk


@pytest.fixture(scope="module")
def adk() -> Path:
    """google-adk[a2a] 2.13.0's venv python (skipped without it; CI fails instead)."""
    return harness.adk_python()


@pytest.fixture(scope="module")
def baseline(adk: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Exchange]:
    """What each side sees of each conversation between two google-adks (per test module:
    the modules run in separate workers)."""
    return adk_to_adk(adk, tmp_path_factory)
