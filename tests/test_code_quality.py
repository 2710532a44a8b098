"""ruff (lint and format) and mypy run as part of the test command, so CI runs them too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ["src", "tests", "bench", "examples"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_ruff_lint() -> None:
    result = run("ruff", "check", *CHECKED)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = run("ruff", "format", "--check", *CHECKED)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_on_src() -> None:
    result = run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
