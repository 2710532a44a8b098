"""Shared by the test agents: each tool run is one line in the file named by CAIRN_CLI_RUNS,
so a test counts runs across processes."""

from __future__ import annotations

import os
from pathlib import Path

RUNS_ENV = "CAIRN_CLI_RUNS"


def ran(name: str) -> None:
    path = os.environ.get(RUNS_ENV)
    if path:
        with Path(path).open("a") as file:
            file.write(name + "\n")


def runs(path: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            counts[line] = counts.get(line, 0) + 1
    return counts
