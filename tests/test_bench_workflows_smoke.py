"""bench/workflows.py runs (a smoke run; no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_workflow_bench_quick_run() -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "workflows.py"),
            "--quick",
            "--stores",
            "memory,sqlite",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    for store in ("memory", "sqlite"):
        line = next(line for line in result.stdout.splitlines() if line.strip().startswith(store))
        assert "invocations/s" in line and "resume after 10 rounds" in line
