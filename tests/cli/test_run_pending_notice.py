"""``cairn run`` says plainly that a review is still pending when a new message is typed:
the README's email review, run as a real process. At a terminal it shows the pending
interrupts and asks whether to answer them first; with piped input it says so on stderr
and sends the message (a new run; the review stays waiting)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.terminal import Terminal
from tests.support.waiting import BOUND_SECONDS

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "email_review"
FIRST, SECOND = "the report is ready", "the budget is cut by 10%"
ANSWER = "answer (JSON or text, empty skips)> "
ASK_FIRST = "answer it first, then send your message? [y/n, n or empty sends it now]> "


def sent(request: str) -> str:
    """How ``cairn run`` prints the node that sends the email for ``request``."""
    return f"send_email@1 → SENT: Hello team, {request}. Best regards, Ada"


def cairn_run(tmp_path: Path) -> list[str]:
    store = tmp_path / "sessions.db"
    return [sys.executable, "-m", "cairn.cli", "run", str(EXAMPLE), "--store", str(store)]


def env() -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "TERM": "dumb"}


def test_at_a_terminal_a_new_message_shows_the_pending_review_and_offers_it_first(
    tmp_path: Path,
) -> None:
    with Terminal([*cairn_run(tmp_path), "--no-color"], cwd=tmp_path, env=env()) as terminal:
        terminal.expect("you> ")
        terminal.send(FIRST)
        terminal.expect(ANSWER)
        terminal.send("")  # skip the review: it stays pending
        terminal.expect("you> ")
        terminal.send(SECOND)
        notice = terminal.expect(ASK_FIRST)
        assert "1 interrupt is still pending. A new message starts a new run" in notice
        assert "⏸ input" in notice and "(email_review@1/request_review@1)" in notice
        assert "Please review the draft" in notice and f"{FIRST}." in notice  # what it asks
        assert "draft_from_template" not in notice  # the message has not been sent yet

        terminal.send("y")  # answer it first: the first draft is sent ...
        terminal.expect(ANSWER)
        terminal.send("approve")
        second_review = terminal.expect(ANSWER)
        assert sent(FIRST) in second_review and sent(SECOND) not in second_review
        # ... then the message goes out and its own review is asked for.
        assert "now sending your message" in second_review
        assert f"draft_from_template@1 → Hello team, {SECOND}." in second_review
        terminal.send("approve")
        assert sent(SECOND) in terminal.expect("you> ")

        # Skipped again and answered "n": the message is sent now, the review keeps waiting.
        terminal.send("a third request")
        terminal.expect(ANSWER)
        terminal.send("")
        terminal.expect("you> ")
        terminal.send("a fourth request")
        terminal.expect(ASK_FIRST)
        terminal.send("n")
        assert "draft_from_template@1 → Hello team, a fourth request." in terminal.expect(ANSWER)
        terminal.send("")
        terminal.expect("you> ")
        terminal.send("/pending")
        listed = terminal.expect("you> ")
        assert "2 pending interrupt(s)" in listed
        assert "a third request." in listed and "a fourth request." in listed
        terminal.send("/quit")
        assert terminal.wait() == 0


def test_with_piped_input_the_notice_goes_to_stderr_and_the_message_is_sent(
    tmp_path: Path,
) -> None:
    lines = [FIRST, "", SECOND, "approve"]  # skip the first review, then a second request
    result = subprocess.run(
        cairn_run(tmp_path),
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
        cwd=tmp_path,
        env=env(),
    )
    assert result.returncode == 0, result.stderr
    assert "note: 1 interrupt is still pending (input input-" in result.stderr
    assert "Please review the draft" in result.stderr
    assert "Sending the message anyway: it starts a new run" in result.stderr
    assert "the pending one stays waiting" in result.stderr
    # The answer went to the review the second message started, and sent its draft.
    assert sent(SECOND) in result.stdout and sent(FIRST) not in result.stdout
    assert ASK_FIRST not in result.stdout  # nobody to ask


def test_a_replayed_message_while_a_review_waits_gets_the_note_on_stderr(tmp_path: Path) -> None:
    turns = tmp_path / "turns.txt"
    turns.write_text(f"{FIRST}\n{SECOND}\n", encoding="utf-8")
    result = subprocess.run(
        [*cairn_run(tmp_path), "--replay", str(turns)],
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
        cwd=tmp_path,
        env=env(),
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("note: 1 interrupt is still pending") == 1  # before SECOND only
    assert "it starts a new run, and the pending one stays waiting" in result.stderr
    assert "2 pending interrupt(s)" in result.stdout  # both reviews wait at the end
