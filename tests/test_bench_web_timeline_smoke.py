"""bench/web_timeline.py runs and prints its rows (a smoke run with small sessions; no timing
is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support.databases import service_unavailable
from tests.web.conftest import CHROMIUM

ROOT = Path(__file__).resolve().parent.parent


def test_web_timeline_bench_quick_run() -> None:
    if not CHROMIUM.exists():
        service_unavailable(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "web_timeline.py"), "--sizes", "8,40", "--runs", "1"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any("8 events" in line and "40 events" in line and "40/8" in line for line in lines)
    figure = r"\s+\d+\.\d\s+\d+\.\d\s+\d+\.\d\dx"
    for label, target in (
        ("open: newest row shown, page idle (median)", "<= 1000 ms"),
        ("open: newest row shown (median)", ""),
        ("open: first, server not warm (1 run)", ""),
        ("new turn: event sent -> row shown (median)", "<= 500 ms"),
        ("new turn: event sent -> row shown (worst)", "<= 500 ms"),
    ):
        (row,) = [line for line in lines if line.startswith(label)]
        assert re.match(re.escape(label) + figure, row), row
        assert target in row, row


def test_web_timeline_bench_refuses_zero_runs() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "web_timeline.py"), "--runs", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "--runs and every size must be at least 1" in result.stderr
