"""The email-review demo: a workflow that pauses for a human and survives a restart.

    python examples/email_review/main.py                    # start, or continue a waiting review
    python examples/email_review/main.py --answer approve   # answer without a prompt
    python examples/email_review/main.py --reset            # forget everything, start over

Everything is stored in .cairn/email-review.db (SQLite). Quit at the review prompt
(Ctrl-D), or let the process die, and run the same command again later: the waiting
review is found in the log and the workflow resumes exactly there.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from google.genai import types

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cairn import Event, Runner, SqliteSessionService
from workflow import root_agent

STORE = Path(".cairn") / "email-review.db"
APP, USER, SESSION = "email_review", "ada", "demo"
REQUEST = "the quarterly report is ready for everyone to read"


def show(event: Event) -> None:
    where = event.node_info.path or event.author
    for call in event.get_function_calls():
        print(f"  {where:<34} asks: {call.args.get('message')}")
        print(f"  {'':<34} draft:\n" + _indent(call.args["payload"]["draft"]))
    for response in event.get_function_responses():
        print(f"  {where:<34} answer: {response.response}")
    if event.error_message:
        print(f"  {where:<34} error: {event.error_message}")
    elif event.node_info.path in (event.node_info.output_for or []) and event.output is not None:
        if isinstance(event.output, dict):  # e.g. {"draft": ..., "answer": ...}: one line
            print(f"  {where:<34} -> {_summary(event.output)}")
        else:
            first, *rest = str(event.output).splitlines() or [""]
            print(f"  {where:<34} -> {first}")
            if rest:
                print(_indent("\n".join(rest)))
        if event.actions.route:
            print(f"  {'':<34}    route: {event.actions.route}")


def _indent(text: str) -> str:
    return "\n".join(f"{'':<40}| {line}" for line in text.splitlines())


def _summary(output: dict[str, object]) -> str:
    """A node's dict output on one line: each value's first line (``...`` if there is more)."""
    shown = []
    for key, value in output.items():
        first, *rest = str(value).splitlines() or [""]
        shown.append(f"{key}: {first}{' ...' if rest else ''}")
    return "; ".join(shown)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--answer", help="the review answer: approve, reject, or feedback")
    parser.add_argument("--reset", action="store_true", help="delete the stored demo session")
    args = parser.parse_args()
    store = SqliteSessionService(STORE)
    runner = Runner(app_name=APP, agent=root_agent, session_service=store)
    if args.reset:
        await store.delete_session(app_name=APP, user_id=USER, session_id=SESSION)
    session = await store.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    if session is None:
        session = await store.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    print(f"store: SQLite file {STORE}")
    # Each waiting review belongs to its own run (invocation) and carries the draft it shows;
    # answering one resumes exactly that run, so it sends exactly that draft.
    reviews = await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)
    waiting = reviews[0].id if reviews else None
    if not reviews:
        print(f"\n== new request: {REQUEST}")
        message = types.Content(role="user", parts=[types.Part(text=REQUEST)])
    else:
        print(f"\n== found a review waiting in the log ({waiting}); resuming there")
        print("  the draft it asks about:\n" + _indent(reviews[0].payload["draft"]))
        if len(reviews) > 1:
            print(f"  ({len(reviews) - 1} more review(s) wait after it, each for its own draft)")
    while True:
        if waiting is not None:
            answer = args.answer
            args.answer = None
            if answer is None:
                if not sys.stdin.isatty():
                    print(
                        "\nThe workflow is waiting for a review. Run again with --answer "
                        "approve | reject | '<your feedback>' (or run it in a terminal)."
                    )
                    return 0
                try:
                    answer = input("\nyour review (approve / reject / feedback): ").strip()
                except EOFError:
                    answer = ""
                if not answer:
                    print("Quit: the review stays waiting in the log; run again to answer it.")
                    return 0
            reply = types.FunctionResponse(
                id=waiting, name="adk_request_input", response={"result": answer}
            )
            message = types.Content(role="user", parts=[types.Part(function_response=reply)])
            print(f"\n== answering the review: {answer!r}")
        waiting = None
        async for event in runner.run_async(user_id=USER, session_id=SESSION, new_message=message):
            show(event)
            if event.long_running_tool_ids:
                waiting = next(iter(event.long_running_tool_ids))
        if waiting is None:
            break
    await store.close()
    print("\n== done")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
