"""bench/a2a_round_trips.py in its quick mode: every server answers every round trip with a
completed task carrying the agent's reply, and the ratios are printed (no timing asserted).

google-adk's server runs in bench/.peers/adk (made by bench/peers.py on a first run).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.databases import REQUIRE_SERVICES
from tests.support.waiting import BOUND_SECONDS

ROOT = Path(__file__).resolve().parent.parent
ROWS = (
    "client ceiling (trivial server)",
    "cairn to_a2a, in memory",
    "cairn to_a2a, SQLite",
    "google-adk 2.13.0 to_a2a",
)


def cells(output: str, title: str) -> list[str]:
    line = next(line for line in output.splitlines() if line.startswith(title + "  "))
    return re.split(r"\s{2,}", line[len(title) :].strip())


@pytest.mark.parametrize("protocol", ["1.0", "0.3"])
def test_every_server_answers_every_round_trip(protocol: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "a2a_round_trips.py"), "--quick",
         f"--protocol={protocol}"],
        capture_output=True, text=True, cwd=ROOT, timeout=BOUND_SECONDS * 3,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    adk = cells(done.stdout, ROWS[-1])
    if adk[0].startswith("failed: venv:"):
        reason = f"google-adk[a2a] 2.13.0's venv cannot be made: {adk[0]}"
        if REQUIRE_SERVICES:
            pytest.fail(f"{reason} (CAIRN_REQUIRE_SERVICES=1 requires it)")
        pytest.skip(reason)
    for title in ROWS:
        row = cells(done.stdout, title)
        assert re.fullmatch(r"[\d,]+/s", row[0]) and row[0] != "0/s", (title, row, done.stdout)
        # round trips/s, each round, median, p99, errors, CPU/round trip, cairn/ADK, ...
        assert row[4] == "0", (title, "errors", done.stdout)  # every answer a completed task
        assert re.fullmatch(r"\d+\.\d\d ms", row[5]), (title, "CPU", done.stdout)
        if title.startswith("cairn"):
            assert re.fullmatch(r"\d+\.\d\dx", row[6]), (title, "ratio", done.stdout)
