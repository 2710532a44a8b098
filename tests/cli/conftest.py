"""The ``cli`` fixture: ``cairn`` run in this process, on a SQLite file in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli.harness import Cli


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(store=str(tmp_path / "sessions.db"), runs_file=tmp_path / "runs.txt")
