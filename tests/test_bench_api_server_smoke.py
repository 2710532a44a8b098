"""bench/api_server.py runs against a real cairn server on PostgreSQL (no timing asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.databases import REQUIRE_SERVICES

ROOT = Path(__file__).resolve().parent.parent


def test_api_server_bench_quick_run() -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "api_server.py"),
            "--no-peer",
            "--workers",
            "1",
            "--seconds",
            "1",
            "--clients",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0 and "Connect call failed" in result.stderr and not REQUIRE_SERVICES:
        pytest.skip("no PostgreSQL at 127.0.0.1:5432")
    assert result.returncode == 0, result.stderr
    for app in ("chat", "flow"):
        line = next(line for line in result.stdout.splitlines() if f" {app} " in line)
        assert "req/s" in line and "median" in line and "errors" not in line
