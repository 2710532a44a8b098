"""bench/scale_out.py runs both executors against real processes on PostgreSQL and a
Temporal dev server (no timing asserted): every run done, none twice or out of order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.databases import REQUIRE_SERVICES

ROOT = Path(__file__).resolve().parent.parent


def test_scale_out_bench_small_run() -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "scale_out.py"),
            "--sessions",
            "3",
            "--runs",
            "2",
            "--workers",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if result.returncode != 0 and "Connect call failed" in result.stderr and not REQUIRE_SERVICES:
        pytest.skip("no PostgreSQL at 127.0.0.1:5432")
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if " runs " in line and "inv/s" in line]
    assert [row.split("  ")[0].strip() for row in rows] == [
        "temporal, 1 worker",
        "in-process, 1 server",
    ]
    for row in rows:
        assert "     6 runs" in row
        assert "failed/cancelled 0 paused in doubt 0" in row
        assert "out-of-order 0 overlapping 0 double 0" in row
    assert "out-of-order, overlapping or double runs in all rows: 0" in result.stdout
