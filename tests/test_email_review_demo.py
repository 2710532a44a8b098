"""The README's main demo: the email review survives process restarts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "email_review" / "main.py"


def demo(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, str(DEMO), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_review_waits_across_restarts_and_resumes_exactly_there(tmp_path: Path) -> None:
    first = demo(tmp_path)
    assert "draft_from_template@1 -> Hello team," in first
    assert "request_review@1    asks: Please review" in first
    assert "waiting for a review" in first
    assert (tmp_path / ".cairn" / "email-review.db").exists()

    # A new process finds the waiting review; feedback loops back to drafting.
    second = demo(tmp_path, "--answer", "mention the Friday deadline")
    assert "found a review waiting in the log" in second
    assert "route: revise" in second
    assert "draft_from_template@1" not in second  # the first draft is not written again
    assert "draft_from_template@2 -> Hello team," in second
    assert "(Revised: mention the Friday deadline.)" in second

    third = demo(tmp_path, "--answer", "approve")
    assert "route: approved" in third and "send_email@1        -> SENT:" in third
    assert "draft_from_template" not in third and "request_review@1" not in third
    assert "== done" in third

    # Nothing is waiting any more: the same command starts a new request.
    assert "== new request" in demo(tmp_path)
    # (and its first draft carries none of the earlier feedback)
    assert "Revised" not in demo(tmp_path, "--reset")
