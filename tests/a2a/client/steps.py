"""Steps the client tests share: run a turn, answer an interrupt, read a record."""

from __future__ import annotations

from typing import Any

from google.genai import types
from tests.hitl.driver import SESSION, USER, message_for

from cairn import Event, Runner
from cairn.agents.run_config import RunConfig
from cairn.events.interrupts import RECORD_FUNCTIONS

__all__ = [
    "SESSION",
    "USER",
    "answer",
    "logged_events",
    "record_calls",
    "records",
    "sent_message_ids",
    "texts",
    "turn",
]


async def turn(
    runner: Runner,
    message: str | types.Content,
    *,
    run_config: RunConfig | None = None,
    session_id: str = SESSION,
) -> list[Event]:
    content = types.UserContent(message) if isinstance(message, str) else message
    return [
        event
        async for event in runner.run_async(
            user_id=USER, session_id=session_id, new_message=content, run_config=run_config
        )
    ]


def answer(interrupt_id: str, name: str, response: dict[str, Any]) -> types.Content:
    content = message_for({"answer": [[interrupt_id, name, response]]})
    assert content is not None
    return content


def texts(events: list[Event], author: str | None = None) -> list[str]:
    """The non-thought texts of the stored (non-partial) events, in order."""
    return [
        part.text
        for event in events
        if not event.partial and (author is None or event.author == author) and event.content
        for part in event.content.parts or []
        if part.text and not part.thought
    ]


async def logged_events(runner: Runner, session_id: str = SESSION) -> list[Event]:
    """The session's events as its store keeps them (the log: records included)."""
    stored = await runner.session_service.get_session(
        app_name=runner.app_name, user_id=USER, session_id=session_id
    )
    assert stored is not None, f"session {session_id!r} is not in the store"
    return stored.events


def record_calls(events: list[Event]) -> list[str]:
    """The names of the runtime's record calls and responses the events hold: none in what
    ``run_async`` yields (google-adk's client yields nothing like them)."""
    return [
        named.name or ""
        for event in events
        for part in (event.content.parts or [] if event.content else [])
        for named in (part.function_call, part.function_response)
        if named is not None and named.name in RECORD_FUNCTIONS
    ]


def records(events: list[Event], kind: str) -> list[Event]:
    """The events that are this kind of record of a remote call (``call``, ``reply``...)."""
    return [e for e in events if (e.custom_metadata or {}).get("a2a:record") == kind]


def sent_message_ids(events: list[Event]) -> list[str]:
    """The messageIds of the sends the events record."""
    return [
        str(call.args["messageId"])
        for event in records(events, "call")
        for call in event.get_function_calls()
        if call.args
    ]
