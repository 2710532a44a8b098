"""Smoke test of the core benchmark: ``bench/core.py --quick`` runs and prints every figure.

No timing is asserted here: the benchmark's numbers depend on the machine.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench" / "core.py"

EXPECTED_LINES = [
    "Python 3.",
    "Machine:",
    "[1] append throughput (in-memory, one session):",
    "note: event construction (not timed above):",
    "[2] append cost @~100 events:",
    "[2] append cost @~10,000 events:",
    "[2] append cost ratio 10,000 vs 100:",
    "[3] get_session(recent 10) @100 events:",
    "[3] get_session(recent 10) @10,000 events:",
    "[3] get_session(recent 10) ratio 10,000 vs 100:",
    "context: get_session(all events) @10,000:",
    "[4a] Runner, fresh session per invocation:",
    "[4b] Runner, one session (loads all history), first",
    "[4b] Runner, one session (loads all history), last",
    "[4c] Runner, one session (history_window=10), first",
    "[4c] Runner, one session (history_window=10), last",
    "Summary vs targets",
    "append throughput:",
    "append cost ratio 10,000 vs 100:",
    "recent-10 read ratio 10,000 vs 100:",
    "reference: google-adk 2.13.0",
]


def test_core_bench_quick_prints_every_figure() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    missing = [label for label in EXPECTED_LINES if label not in done.stdout]
    assert not missing, f"missing lines {missing} in:\n{done.stdout}"
    lines = done.stdout.splitlines()
    for label in EXPECTED_LINES:
        if label in ("Summary vs targets", "Machine:"):
            continue
        rest = next(ln for ln in lines if label in ln).split(label, 1)[1]
        assert any(ch.isdigit() for ch in rest), f"no figure after {label!r}: {rest!r}"
