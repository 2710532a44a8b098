"""How ``cairn run`` shows a run: text as it streams, one line per tool call and result,
errors in red, and each pending interrupt with what it asks."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from google.genai import types
from rich.console import Console
from rich.json import JSON
from rich.text import Text

from cairn.cli._run_log import RunLog
from cairn.events.event import Event
from cairn.events.interrupts import PROTOCOL_FUNCTIONS, Interrupt, describe, is_record_event
from cairn.events.request_input import REQUEST_INPUT_FUNCTION
from cairn.models.errors import MissingApiKeyError

LINE_LIMIT = 120
"""Longest one-line summary of a tool call, result or node output, in characters."""

_ASKING = PROTOCOL_FUNCTIONS | {REQUEST_INPUT_FUNCTION}
"""Calls that are questions to the user: shown as pending interrupts after the run."""

VERBOSE_HINT = "(--verbose shows the traceback)"
_KEY_VARIABLE = re.compile(r"set the (\w+) environment variable")
"""Where ``MissingApiKeyError``'s message names the variable (when only the text is left)."""


def compact(value: Any, limit: int = LINE_LIMIT) -> str:
    """``value`` as one line of JSON (or its text), cut to ``limit`` characters."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except ValueError:  # circular
            text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_summary(call: types.FunctionCall, limit: int = LINE_LIMIT) -> str:
    """``name(arg=value, ...)``, cut to ``limit`` characters."""
    args = ", ".join(f"{key}={_argument(value)}" for key, value in (call.args or {}).items())
    return compact(f"{call.name}({args})", limit)


def _argument(value: Any) -> str:
    return repr(value) if isinstance(value, str) else compact(value)


def print_error(console: Console, text: str) -> None:
    console.print(Text(text, style="bold red"))


class EventPrinter:
    """Prints a run's events as they come; partial text is printed as it streams.

    ``log`` holds the failures cairn logged with a traceback, which the error event
    reporting one takes; ``env_file`` is the agent folder's ``.env``, named in the
    missing-API-key message.
    """

    def __init__(
        self, console: Console, *, log: RunLog | None = None, env_file: Path | None = None
    ) -> None:
        self.console, self.log, self.env_file = console, log, env_file
        self._open_line: str | None = None
        """The author whose streamed text is on the current, unfinished line."""

    def show(self, event: Event, *, stored: bool = False) -> None:
        """Print ``event``; ``stored``: it is from the session's past (the transcript), so
        the user's own messages and answers are shown, and the questions they answered.
        The runtime's records of its own calls are not shown (a run does not give them)."""
        if is_record_event(event):
            return
        if event.partial:
            if not stored:
                self._stream(event)
            return
        if event.author == "user":
            # Live, the user's message is what was just typed; a node's input (a copy of
            # the previous node's output, on the node's path) is never shown again.
            if stored and not event.node_info.path:
                self._users(event)
            return
        streamed = self._open_line == event.author
        self.end_line()
        parts = event.content.parts if event.content and event.content.parts else []
        for part in parts:
            if part.text and not streamed:
                self._text(event.author, part.text, thought=bool(part.thought))
            elif part.function_call is not None and part.function_call.name not in _ASKING:
                self._line("  → ", call_summary(part.function_call), "cyan")
            elif part.function_call is not None and stored:
                asked = describe(event, part.function_call)
                question = f": {asked.message}" if asked.message else ""
                self._line("  ⏸ ", compact(f"{asked.kind} {asked.id}{question}"), "yellow")
            elif part.function_response is not None:
                response = part.function_response
                if response.name not in _ASKING:
                    summary = compact(f"{response.name}: {compact(response.response)}")
                    # A tool's failure, logged with its traceback, is reported here already.
                    failed = not stored and self._reported("\n".join(_strings(response.response)))
                    hint = f" {VERBOSE_HINT}" if failed else ""
                    self._line("  ← ", summary + hint, "red" if failed else "green")
            elif part.executable_code is not None:
                self._line("  → ", f"run code: {compact(part.executable_code.code or '')}", "cyan")
            elif part.code_execution_result is not None:
                result = part.code_execution_result
                failed = result.outcome != types.Outcome.OUTCOME_OK
                label = "code failed" if failed else "code output"
                style = "red" if failed else "green"
                self._line("  ← ", compact(f"{label}: {result.output or ''}"), style)
        if event.error_code or event.error_message:
            self._error(event, stored=stored)
            return
        where = event.node_info.path or event.author
        route = event.actions.route
        chosen = f"  route: {_route(route)}" if route is not None else ""
        if event.output is not None and not any(p.text for p in parts):
            self._line("  ", f"{where} → {compact(event.output)}{chosen}", "magenta")
        elif chosen:
            self._line("  ", f"{where}{chosen}", "magenta")

    def end_line(self) -> None:
        """Finish a line of streamed text, if one is open."""
        if self._open_line is not None:
            self.console.print()
            self._open_line = None

    def end_run(self) -> None:
        """After an invocation: the logged failures no error event reported, a line each."""
        self.end_line()
        if self.log is None:
            return
        for failure in self.log.flush_held():
            print_error(self.console, f"  ✗ {failure.line()} {VERBOSE_HINT}")

    def _error(self, event: Event, *, stored: bool) -> None:
        problem = ": ".join(p for p in (event.error_code, event.error_message) if p)
        failure = None if stored or self.log is None else self.log.take(problem)
        key_hint = self._key_hint(event, failure.error if failure else None)
        traceback = f" {VERBOSE_HINT}" if failure is not None and not key_hint else ""
        print_error(self.console, f"  ✗ {event.author}: {problem}{key_hint}{traceback}")

    def _reported(self, text: str) -> bool:
        """Whether ``text`` reports a failure the log holds (which is then let go)."""
        return self.log is not None and self.log.take(text) is not None

    def _key_hint(self, event: Event, error: BaseException | None) -> str:
        """For a missing API key: where to put it, the agent folder's ``.env`` first."""
        if isinstance(error, MissingApiKeyError):
            variable: str | None = error.env_var
        elif event.error_code == MissingApiKeyError.__name__:
            found = _KEY_VARIABLE.search(event.error_message or "")
            variable = found.group(1) if found else None
        else:
            return ""
        name = variable or "the API key variable"
        where = str(self.env_file) if self.env_file is not None else "the agent folder's .env"
        return (
            f" — put {name}=... in {where} (cairn run reads that file at start), or export "
            f"{name} in this shell"
        )

    def _users(self, event: Event) -> None:
        parts = event.content.parts if event.content and event.content.parts else []
        for part in parts:
            if part.text:
                self.console.print(Text.assemble(Text("you: ", style="bold blue"), part.text))
            elif part.function_response is not None:
                response = part.function_response
                answer = f"answer {response.id}: {compact(response.response)}"
                self._line("  ", compact(answer), "blue")

    def _stream(self, event: Event) -> None:
        parts = event.content.parts if event.content and event.content.parts else []
        text = "".join(p.text or "" for p in parts if not p.thought)
        if not text:
            return
        if self._open_line != event.author:
            self.end_line()
            self.console.print(Text(f"{event.author}: ", style="bold"), end="")
            self._open_line = event.author
        self.console.print(Text(text), end="")

    def _text(self, author: str, text: str, *, thought: bool) -> None:
        # A thought (a plan, the model's reasoning) is shown as such, never as the answer.
        label = Text(f"{author} (thinking): " if thought else f"{author}: ", style="bold")
        body = Text(text, style="dim italic" if thought else "")
        self.console.print(Text.assemble(label, body))

    def _line(self, prefix: str, text: str, style: str) -> None:
        self.console.print(Text.assemble(Text(prefix, style="dim"), Text(text, style=style)))


def _strings(value: Any) -> list[str]:
    """The strings in ``value`` (a tool's response), at any depth."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _route(route: Any) -> str:
    """A node's chosen route (a value or a list of them), as the workflow's edges name it."""
    routes = route if isinstance(route, list) else [route]
    return ", ".join(str(r) for r in routes)


def show_interrupt(console: Console, interrupt: Interrupt, *, full: bool = False) -> None:
    """What ``interrupt`` asks; ``full`` adds the invocation, the answer's function name and
    the schema of every kind (the prompt shows only an input request's schema)."""
    where = interrupt.node_path or interrupt.author
    console.print(
        Text.assemble(
            Text("⏸ ", style="yellow"),
            Text(interrupt.kind, style="bold yellow"),
            "  ",
            Text(interrupt.id, style="bold"),
            Text(f"  ({where})", style="dim"),
        )
    )
    message = interrupt.message
    if interrupt.kind == "interrupted" and not full:
        message = (
            f"invocation {interrupt.invocation_id} stopped in the middle of this call (its "
            "process died), so whether it took effect is unknown"
        )
    if message:
        _field(console, "asks", Text(message))
    call = interrupt.function_call
    if call is not None and interrupt.kind != "input":
        _field(console, "call", Text(call_summary(call), style="cyan"))
    if interrupt.payload is not None:
        _field(console, "payload", _json(interrupt.payload))
    if interrupt.response_schema is not None and (full or interrupt.kind == "input"):
        _field(console, "schema", _json(interrupt.response_schema))
    if full:
        _field(console, "answer as", Text(f"FunctionResponse(id=..., name={interrupt.name!r})"))
        _field(console, "invocation", Text(interrupt.invocation_id))


def _json(value: Any) -> Text:
    """``value`` as highlighted JSON: one line if short, else indented."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return JSON(text, indent=None if len(text) <= 200 else 2, highlight=True).text


def _field(console: Console, label: str, value: Text) -> None:
    lines = value.split("\n")
    if len(lines) == 1:
        console.print(Text.assemble(Text(f"  {label}: ", style="dim"), value))
        return
    console.print(Text(f"  {label}:", style="dim"))
    for line in lines:
        console.print(Text.assemble("    ", line))
