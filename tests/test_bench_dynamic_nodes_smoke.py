"""bench/dynamic_nodes.py runs on both stores (a smoke run; no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_dynamic_nodes_bench_quick_run() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "dynamic_nodes.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for store in ("memory", "sqlite"):
        lines = [line for line in result.stdout.splitlines() if line.strip().startswith(store)]
        assert len(lines) == 2, result.stdout
        assert "in the invocation: resume after 10 dynamic runs" in lines[0]
        assert "in the history: resume after 10 earlier dynamic runs" in lines[1]
        assert all("x; target within 1.5x" in line for line in lines)
