"""Smoke test of the store benchmark: ``bench/stores.py --quick`` runs and prints every row.

Only the in-memory and SQLite stores are run (no server needed). No timing is
asserted: the benchmark's numbers depend on the machine and its disk.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench" / "stores.py"

# Table rows, as labelled with --quick's sizes.
ROW_LABELS = [
    "append/s (300 appends, one session)",
    "raw driver tx/s (alternating blocks)",
    "append/s / raw tx/s",
    "append µs @~100 events",
    "append µs @~1,000 events [quick size]",
    "append cost ratio 1,000 / 100 [quick size]",
    "full read ms (300 events)",
    "recent-10 read ms @1,000 events [quick size]",
    "first page ms (50 of 1,000 sessions)",
    "first page ms, after ANALYZE",
    "creates/s (1,000, 2 state keys each)",
    "context: appends/s filling to 1,000",
]
# A fresh process's first load: measured on the SQL stores only.
FIRST_LOAD_ROWS = [
    "first load ms, new process @100 events",
    "  its first get_session ms @100",
    "first load ms, new process @1,300 events [quick size]",
    "  its first get_session ms @1,300 [quick size]",
    "  its imports ms (import cairn, cairn.sessions)",
    "context: python -c pass ms (same run)",
]
ROW_LABELS += FIRST_LOAD_ROWS
OTHER_LINES = [
    "Python 3.",
    "Machine:",
    "raw sqlite3 WAL synchronous=FULL",
    "MB at first load)",
    "Targets (informational",
    "sqlite append/s vs raw sqlite3 WAL synchronous=FULL:",
    "reference (quoted from the issue, NOT measured here): google-adk 2.13.0",
]


def test_stores_bench_quick_prints_every_row() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--stores", "memory,sqlite"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    missing = [label for label in ROW_LABELS + OTHER_LINES if label not in done.stdout]
    assert not missing, f"missing lines {missing} in:\n{done.stdout}"
    lines = done.stdout.splitlines()
    header = next(ln for ln in lines if ln.startswith("Store "))
    assert header.split()[1:] == ["memory", "sqlite"], header
    for label in ROW_LABELS:
        cells = next(ln for ln in lines if ln.startswith(label)).split(label, 1)[1].split()
        assert len(cells) == 2, f"row {label!r} should have one cell per store: {cells}"
        # The SQLite column always holds a figure; the in-memory one has no raw driver
        # and no first load (its rows show "-").
        assert any(ch.isdigit() for ch in cells[1]), f"no figure in row {label!r}: {cells}"
        if label in FIRST_LOAD_ROWS:
            assert cells[0] == "-", f"the in-memory store has no first load: {cells}"
