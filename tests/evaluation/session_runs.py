"""A small clerk agent (a ScriptedLlm that reacts to the last message) and a driver that
runs user turns through cairn's Runner, for the tests that make eval cases from sessions.

The model: a message ``refund N`` calls ``refund`` (needs confirmation), ``ask Q`` calls the
long-running ``ask_manager``, ``note X`` calls ``note`` (writes state), ``weather C`` calls
``get_weather``; anything else is answered ``ok: <message>``. Shown tool results, it answers
``results: <json of them>``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.genai import types

from cairn import Agent, FunctionTool, LongRunningFunctionTool, ToolContext
from cairn.events.event import Event
from cairn.models.llm_request import LlmRequest
from cairn.runners import Runner
from cairn.testing import Call, ScriptedLlm

CALLS_FILE = "tool_calls.txt"
"""Under the directory a clerk is made for: one line per tool body that ran."""


def _log(directory: Path, line: str) -> None:
    with (directory / CALLS_FILE).open("a", encoding="utf-8") as file:
        file.write(line + "\n")


def tool_runs(directory: Path) -> list[str]:
    """The tool bodies that ran, in order (``name:argument``)."""
    path = directory / CALLS_FILE
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def respond(request: LlmRequest) -> Any:
    parts = request.contents[-1].parts or []
    results = {
        p.function_response.name: p.function_response.response
        for p in parts
        if p.function_response is not None
    }
    if results:
        return "results: " + json.dumps(results, sort_keys=True)
    text = " ".join(p.text or "" for p in parts).strip()
    word, _, rest = text.partition(" ")
    if word == "refund":
        return Call("refund", amount=int(rest))
    if word == "ask":
        return Call("ask_manager", question=rest)
    if word == "note":
        return Call("note", text=rest)
    if word == "weather":
        return Call("get_weather", city=rest)
    return f"ok: {text}"


def clerk(directory: Path, *, model: ScriptedLlm | None = None) -> Agent:
    """The clerk; its tools log their runs under ``directory``."""

    def refund(amount: int) -> dict[str, Any]:
        """Refund an amount."""
        _log(directory, f"refund:{amount}")
        return {"refunded": amount}

    def ask_manager(question: str) -> None:
        """Ask a manager; the answer comes later."""
        _log(directory, f"ask_manager:{question}")

    def note(text: str, tool_context: ToolContext) -> dict[str, Any]:
        """Keep a note."""
        _log(directory, f"note:{text}")
        tool_context.state["notes"] = int(tool_context.state.get("notes", 0)) + 1
        tool_context.state["user:last_note"] = text
        tool_context.state["temp:scratch"] = text
        return {"noted": text}

    def get_weather(city: str) -> dict[str, Any]:
        """The weather in a city."""
        _log(directory, f"get_weather:{city}")
        return {"city": city, "sky": "sunny" if city == "Paris" else "rain"}

    return Agent(
        name="clerk",
        model=model or ScriptedLlm(respond=respond),
        tools=[
            FunctionTool(refund, require_confirmation=True),
            LongRunningFunctionTool(ask_manager),
            note,
            get_weather,
        ],
    )


@dataclass
class Answer:
    """A user turn that answers a pause: the pending call of that name, with ``response``."""

    name: str
    response: dict[str, Any]


async def drive(runner: Runner, user_id: str, session_id: str, turns: list[str | Answer]) -> None:
    """Run each turn as one ``run_async``: a text message, or the answer to the pending
    interrupt whose function name is ``Answer.name``."""
    for turn in turns:
        if isinstance(turn, str):
            message = types.Content(role="user", parts=[types.Part(text=turn)])
        else:
            pending = await runner.list_pending_interrupts(user_id=user_id, session_id=session_id)
            [interrupt] = [i for i in pending if i.name == turn.name]
            response = types.FunctionResponse(
                id=interrupt.id, name=interrupt.name, response=turn.response
            )
            message = types.Content(role="user", parts=[types.Part(function_response=response)])
        events: list[Event] = [
            e
            async for e in runner.run_async(
                user_id=user_id, session_id=session_id, new_message=message
            )
        ]
        assert events, f"turn {turn!r} produced no events"


CONFIRMED = Answer("adk_request_confirmation", {"confirmed": True})
