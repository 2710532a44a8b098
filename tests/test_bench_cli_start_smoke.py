"""bench/cli_start.py runs and prints its rows (a smoke run; no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_cli_start_bench_quick_run() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cli_start.py"), "--runs", "1", "--no-install"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    rows = {line.split("  ")[0].strip(): line for line in result.stdout.splitlines()}
    for label in ("python -c pass", "import cairn", "cairn --help", "adk --help"):
        assert label in rows, result.stdout
    assert "<= 300 ms" in rows["import cairn"] and "<= 500 ms" in rows["cairn --help"]
    # adk --help has figures when bench/.peers/adk exists, else the reason it could not run
    assert "1.00x" in rows["adk --help"] or "failed:" in rows["adk --help"]


def test_cli_start_bench_refuses_zero_runs() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cli_start.py"), "--runs", "0", "--no-peer"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "--runs must be at least 1" in result.stderr
