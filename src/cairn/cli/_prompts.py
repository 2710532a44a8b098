"""Asking the user for the answer to one pending interrupt, in the way its kind needs.

An empty line skips the interrupt (it stays pending); end of input or ``/quit``
raises ``Quit``. Answers are checked here as the Runner would check them, so a
wrong one is asked again with the reason instead of being refused after sending.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
from typing import Any

from google.genai import types
from rich.console import Console
from rich.text import Text

from cairn.cli._render import print_error
from cairn.events.interrupts import Interrupt, schema_problem

QUIT_COMMAND = "/quit"
SCHEMA_REFUSAL = "it does not match the request's response_schema"
"""How an answer that fails the schema is refused: the words of the Runner (and so of the
HTTP API's 422), so a user reads the same reason in the terminal as over HTTP."""


class Quit(Exception):
    """The user ended the session (end of input, or ``/quit``)."""


@dataclasses.dataclass(frozen=True)
class Reply:
    """An answer to send: ``response`` becomes the ``FunctionResponse.response``."""

    interrupt: Interrupt
    response: dict[str, Any]

    def part(self) -> types.Part:
        return types.Part(
            function_response=types.FunctionResponse(
                id=self.interrupt.id, name=self.interrupt.name, response=self.response
            )
        )


@dataclasses.dataclass(frozen=True)
class ContinueInvocation:
    """Run an interrupted invocation again (``run_async(invocation_id=...)``)."""

    invocation_id: str


Decision = Reply | ContinueInvocation | None
"""What the user decided about one interrupt; None: skipped, it stays pending."""


class Terminal:
    """Reads the user's lines through the console. Input that is not a terminal is echoed,
    so a piped session still reads as a transcript."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.interactive = sys.stdin.isatty()
        """A person types at a terminal (not a pipe or a file): questions can be asked."""
        self.echo = not self.interactive
        if self.interactive:  # line editing and history at a terminal, where there is readline
            with contextlib.suppress(ImportError):
                import readline  # noqa: F401

    def ask(self, prompt: str, *, secret: bool = False) -> str:
        """One line, stripped; raises ``Quit`` at end of input or on ``/quit``.

        A ``secret`` line is not echoed back (it still shows as typed in a terminal).
        """
        try:
            line = self.console.input(Text(prompt, style="bold blue"))
        except EOFError:
            self.console.print()
            raise Quit from None
        if self.echo:
            self.console.print(Text("(not shown)", style="dim") if secret else Text(line))
        line = line.strip()
        if line == QUIT_COMMAND:
            raise Quit
        return line

    def yes_or_no(self, prompt: str) -> bool | None:
        """True for y/yes, False for n/no, None for an empty line (skip)."""
        while True:
            answer = self.ask(prompt).lower()
            if not answer:
                return None
            if answer in ("y", "yes"):
                return True
            if answer in ("n", "no"):
                return False
            print_error(self.console, "  answer y or n (an empty line skips)")


def response_for(interrupt: Interrupt, value: Any) -> dict[str, Any]:
    """The ``FunctionResponse.response`` that answers ``interrupt`` with ``value``.

    An object is sent as it is, except: a credential object without ``authScheme``
    is taken as the credential and filled into the asked auth config, and an
    in-doubt object without ``rerun``/``result`` is the tool's result. Other values:
    a confirmation's ``true``/``false`` is ``{"confirmed": ...}``, an in-doubt
    ``"rerun"`` is ``{"rerun": true}``, anything else is ``{"result": value}``.
    """
    kind = interrupt.kind
    if kind == "confirmation" and isinstance(value, bool):
        return {"confirmed": value}
    if kind == "in_doubt":
        if value == "rerun":
            return {"rerun": True}
        if isinstance(value, dict) and ("rerun" in value or "result" in value):
            return value
        return {"result": value}
    asked = interrupt.payload
    if kind == "credential" and isinstance(value, dict) and isinstance(asked, dict):
        is_config = bool({"authScheme", "auth_scheme"} & value.keys())
        return value if is_config else {**asked, "exchangedAuthCredential": value}
    if isinstance(value, dict):
        return value
    return {"result": value}


def json_or_text(text: str) -> Any:
    """``text`` parsed as JSON, or the text itself if it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def input_value(text: str, schema: dict[str, Any] | None) -> tuple[Any, str | None]:
    """The answer ``text`` stands for, and why it does not match ``schema`` (None if it does).

    Without a schema the answer is the text. With one, ``text`` as JSON is tried
    first, then as a plain string (so ``yes`` matches ``{"type": "string"}``).
    """
    if schema is None:
        return text, None
    candidates: list[Any] = [text]
    with contextlib.suppress(ValueError):
        candidates.insert(0, json.loads(text))
    first_problem: str | None = None
    for candidate in candidates:
        problem = schema_problem(schema, candidate)
        if problem is None:
            return candidate, None
        first_problem = first_problem or problem
    return None, first_problem


def ask(interrupt: Interrupt, terminal: Terminal) -> Decision:
    """Ask for the answer to ``interrupt``; None when the user skips it."""
    asking = {
        "input": _input,
        "confirmation": _confirmation,
        "credential": _credential,
        "long_running": _long_running,
        "in_doubt": _in_doubt,
        "interrupted": _interrupted,
    }[interrupt.kind]
    return asking(interrupt, terminal)


def _input(interrupt: Interrupt, terminal: Terminal) -> Decision:
    schema = interrupt.response_schema
    prompt = "answer (JSON or text" if schema is not None else "answer (text"
    while True:
        text = terminal.ask(prompt + ", empty skips)> ")
        if not text:
            return None
        value, problem = input_value(text, schema)
        if problem is None:
            return Reply(interrupt, response_for(interrupt, value))
        print_error(terminal.console, f"  not accepted: {SCHEMA_REFUSAL}: {problem}")


def _confirmation(interrupt: Interrupt, terminal: Terminal) -> Decision:
    approved = terminal.yes_or_no("approve? [y/n, empty skips]> ")
    if approved is None:
        return None
    response: dict[str, Any] = {"confirmed": approved}
    if approved and interrupt.payload is not None:
        payload = _json(terminal, "payload as JSON (empty keeps it)> ")
        response["payload"] = interrupt.payload if payload is _EMPTY else payload
    return Reply(interrupt, response)


def _credential(interrupt: Interrupt, terminal: Terminal) -> Decision:
    while True:
        value = _json(terminal, "credential as JSON (empty skips)> ", secret=True)
        if value is _EMPTY:
            return None
        if isinstance(value, dict):
            return Reply(interrupt, response_for(interrupt, value))
        print_error(
            terminal.console,
            "  a credential is a JSON object: the auth config above with "
            "exchangedAuthCredential filled in, or just the credential",
        )


def _long_running(interrupt: Interrupt, terminal: Terminal) -> Decision:
    name = interrupt.function_call.name if interrupt.function_call else interrupt.name
    text = terminal.ask(f"result of {name} (JSON or text, empty skips)> ")
    if not text:
        return None
    return Reply(interrupt, response_for(interrupt, json_or_text(text)))


def _in_doubt(interrupt: Interrupt, terminal: Terminal) -> Decision:
    while True:
        choice = terminal.ask("[r]erun the call or [s]upply its result (empty skips)> ").lower()
        if not choice:
            return None
        if choice in ("r", "rerun"):
            return Reply(interrupt, {"rerun": True})
        if choice in ("s", "supply"):
            text = terminal.ask("its result (JSON or text, empty skips)> ")
            if not text:
                return None
            return Reply(interrupt, {"result": json_or_text(text)})
        print_error(terminal.console, "  answer r or s (an empty line skips)")


def _interrupted(interrupt: Interrupt, terminal: Terminal) -> Decision:
    prompt = "continue it? (idempotent calls run again, you decide about the others) "
    if terminal.yes_or_no(prompt + "[y/n, empty skips]> "):
        return ContinueInvocation(interrupt.invocation_id)
    return None


class _Empty:
    """An empty line where JSON was asked for."""


_EMPTY = _Empty()


def _json(terminal: Terminal, prompt: str, *, secret: bool = False) -> Any:
    """A JSON value, asked again until it parses; ``_EMPTY`` for an empty line."""
    while True:
        text = terminal.ask(prompt, secret=secret)
        if not text:
            return _EMPTY
        try:
            return json.loads(text)
        except ValueError as exc:
            print_error(terminal.console, f"  not JSON ({exc}); try again")
