"""bench/model_server_overhead.py runs against the real local model server (a smoke run;
no timing is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support.model_server import ModelServer

ROOT = Path(__file__).resolve().parents[2]


def test_model_server_overhead_bench_quick_run(model_server: ModelServer) -> None:
    # The fixture makes sure the server is built (or fails in CI); the bench starts its own.
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "model_server_overhead.py"), "--turns", "2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for way in ("direct openai client", "cairn, memory", "cairn, SQLite"):
        line = next(line for line in result.stdout.splitlines() if way in line)
        assert re.search(r"\d+\.\d ms", line)
    assert result.stdout.count("overhead") == 2
