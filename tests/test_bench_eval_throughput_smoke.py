"""bench/eval_throughput.py runs on a tiny eval set (a smoke run; no timing is asserted).

The google-adk side runs in the bench's peer venv (bench/.peers/adk-eval,
google-adk[eval]==2.13.0), which the bench makes on its first run (a few minutes, cached
between runs on one machine).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "eval_throughput.py"


def run_bench(*arguments: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), "--cases", "4", "--repeat", "1", *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def rows(output: str, framework: str) -> list[list[str]]:
    """The table rows of ``framework``: its cells, split on runs of two or more spaces."""
    return [
        re.split(r"\s{2,}", line.strip())
        for line in output.splitlines()
        if line.startswith(framework + "  ")
    ]


def test_cairn_passes_every_case_in_process_and_through_its_cli() -> None:
    result = run_bench("--no-adk")
    assert result.returncode == 0, result.stdout + result.stderr
    found = rows(result.stdout, "cairn")
    modes = [row[1] for row in found]
    assert modes == [
        "serial (parallelism 1)",
        "concurrent (parallelism 4)",
        "`cairn eval` (parallelism 4)",
    ]
    for row in found:
        assert row[2:4] == ["4", "4"], row  # cases, passed
    assert "VOID" not in result.stdout


def test_both_frameworks_pass_every_case_and_a_ratio_is_printed() -> None:
    # The first run on a machine installs google-adk[eval] into its venv.
    result = run_bench(timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    adk = rows(result.stdout, "google-adk 2.13.0")
    assert [row[1] for row in adk] == [
        "serial (parallelism 1)",
        "concurrent (parallelism 4)",
        "`adk eval` (parallelism 4)",
    ]
    for row in adk:
        assert row[2:4] == ["4", "4"], row
        assert re.fullmatch(r"\d+(\.\d+)?x", row[6]), row  # cairn/ADK
    assert all(row[2:4] == ["4", "4"] for row in rows(result.stdout, "cairn"))
    assert "VOID" not in result.stdout
