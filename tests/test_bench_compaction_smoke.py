"""bench/compaction.py runs on both stores (a smoke run; no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_compaction_bench_quick_run(store: str) -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "compaction.py"),
            "--turns",
            "120",
            "--interval",
            "10",
            "--overlap",
            "2",
            "--store",
            store,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    for label in ("build the model request", "whole turn", "first turn, new process"):
        line = next(line for line in result.stdout.splitlines() if label in line)
        assert "turn 120" in line and "goal <= 1.5x" in line
    assert "prompt contents" in result.stdout
