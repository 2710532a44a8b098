"""Run ``cairn`` in this process with click's CliRunner, on a SQLite file of the test's own."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner, Result
from tests.cli.agents.scripted import RUNS_ENV, runs

from cairn.cli import main

AGENTS = Path(__file__).resolve().parent / "agents"


@dataclass
class Cli:
    store: str
    runs_file: Path

    def __call__(self, *args: str | Path, input: str | None = None, store: bool = True) -> Result:
        """``cairn ARGS [--store STORE]`` with ``input`` as its standard input."""
        argv = [str(arg) for arg in args] + (["--store", self.store] if store else [])
        return CliRunner().invoke(main, argv, input=input, env={RUNS_ENV: str(self.runs_file)})

    def run(self, agent: str, *args: str, input: str | None = None) -> Result:
        """``cairn run AGENT ARGS --store STORE`` for one of the agents in tests/cli/agents."""
        return self("run", AGENTS / agent, *args, input=input)

    def runs(self) -> dict[str, int]:
        return runs(self.runs_file)


def session_id(output: str) -> str:
    """The id ``cairn run`` printed for the new session it started."""
    found = re.search(r"new session (\S+)", output)
    assert found, output
    return found.group(1)
