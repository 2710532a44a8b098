"""bench/trace_overhead.py runs and prints its rows (a smoke run; no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("store", ["sqlite", "memory"])
def test_trace_overhead_bench_quick_run(store: str) -> None:
    bench = str(ROOT / "bench" / "trace_overhead.py")
    result = subprocess.run(
        [sys.executable, bench, "--turns", "12", "--rounds", "1", "--store", store],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any("recording overhead ratio" in line and "goal <= 1.25x" in line for line in lines)
    assert "spans recorded: 84, dropped: 0" in lines
    for label in ("read an invocation's spans", "read the newest 10 invocations' totals"):
        line = next(line for line in lines if line.startswith(label))
        assert "turn 12" in line and "goal <= 1.5x" in line
