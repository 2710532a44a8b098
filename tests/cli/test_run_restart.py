"""``cairn run`` across a restart, in real processes: a confirmation left unanswered when the
first process ends is asked for first by the next one, and the tool then runs once."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.cli.agents.scripted import RUNS_ENV, runs
from tests.cli.harness import AGENTS
from tests.support.waiting import BOUND_SECONDS

ROOT = Path(__file__).resolve().parents[2]


def cairn(tmp_path: Path, *args: str, input: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cairn.cli", *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
        cwd=tmp_path,  # the default store, .cairn/sessions.db, is relative to it
        env={**os.environ, RUNS_ENV: str(tmp_path / "runs.txt"), "NO_COLOR": "1"},
    )


def test_a_paused_confirmation_is_answered_after_a_restart(tmp_path: Path) -> None:
    store = str(tmp_path / "sessions.db")
    shop = str(AGENTS / "shop.py")
    first = cairn(tmp_path, "run", shop, "--store", store, input="refund my order\n")
    assert first.returncode == 0, first.stderr
    assert "⏸ confirmation" in first.stdout and "approve?" in first.stdout
    assert runs(tmp_path / "runs.txt") == {}  # ended at end of input, nothing answered
    found = re.search(r"continue it later with: (.*)", first.stdout)
    assert found is not None and "--session" in found.group(1)
    session = re.search(r"new session (\S+)", first.stdout)
    assert session is not None

    second = cairn(tmp_path, "run", shop, "--store", store, "--session", session[1], input="y\n")
    assert second.returncode == 0, second.stderr
    before_answer = second.stdout.split("approve?")[0]
    assert "⏸ confirmation" in before_answer and "refund(amount=50)" in before_answer
    assert "you>" not in before_answer  # asked before any new message
    assert 'clerk: results: {"refund": {"refunded": 50}}' in second.stdout
    assert runs(tmp_path / "runs.txt") == {"refund": 1}

    listed = cairn(
        tmp_path, "run", shop, "--store", store, "--session", session[1], "--list-pending", input=""
    )
    assert listed.returncode == 0 and "no pending interrupts" in listed.stdout
    assert runs(tmp_path / "runs.txt") == {"refund": 1}


def test_the_default_store_and_the_console_script(tmp_path: Path) -> None:
    script = shutil.which("cairn", path=str(Path(sys.executable).parent))
    command = [script] if script else [sys.executable, "-m", "cairn.cli"]
    env = {**os.environ, RUNS_ENV: str(tmp_path / "runs.txt")}
    first = subprocess.run(
        [*command, "run", str(AGENTS / "review")],
        input="the report\n",
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
        cwd=tmp_path,
        env=env,
    )
    assert first.returncode == 0, first.stderr
    assert (tmp_path / ".cairn" / "sessions.db").exists()
    session = re.search(r"new session (\S+)", first.stdout)
    assert session is not None
    second = subprocess.run(
        [*command, "run", str(AGENTS / "review"), "--session", session[1], "--no-color"],
        input='{"verdict": "send"}\n',
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
        cwd=tmp_path,
        env=env,
    )
    assert second.returncode == 0, second.stderr
    assert "review@1/send@1 → send:" in second.stdout
    assert runs(tmp_path / "runs.txt") == {"draft": 1, "review": 1, "send": 1}
