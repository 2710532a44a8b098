"""Long sessions for the timeline's tests and bench: thousands of realistic events, stored
in one step with ``import_session`` (no agent runs).

Each turn is four events of one invocation: the user's message ``question <turn>``, the
agent's call ``lookup(topic="topic-<turn>")`` (node ``assistant/lookup``), its result, and the
agent's reply ``answer <turn>`` (node ``assistant/answer``), which sets ``turns`` and
``last_topic`` and, every tenth turn, ``user:visits``. Event ids are ``ev-<index>``.
"""

from __future__ import annotations

import time
from typing import Any

from google.genai import types

from cairn.events.event import Event
from cairn.events.event_actions import EventActions
from cairn.events.node_info import NodeInfo
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.session import Session

PER_TURN = 4


def event_id(index: int) -> str:
    return f"ev-{index:06d}"


def turn_events(turn: int, first_index: int, at: float, author: str = "assistant") -> list[Event]:
    """The four events of one turn, the first with index ``first_index``."""
    invocation = f"e-turn-{turn:05d}"
    call_id = f"call-{turn}"
    delta: dict[str, Any] = {"turns": turn, "last_topic": f"topic-{turn}"}
    if turn % 10 == 0:
        delta["user:visits"] = turn // 10
    call = types.FunctionCall(id=call_id, name="lookup", args={"topic": f"topic-{turn}"})
    result = types.FunctionResponse(
        id=call_id, name="lookup", response={"facts": f"facts about {turn}"}
    )
    contents = [
        ("user", "user", types.Part(text=f"question {turn}"), "", {}),
        (author, "model", types.Part(function_call=call), f"{author}/lookup", {}),
        (author, "user", types.Part(function_response=result), f"{author}/lookup", {}),
        (author, "model", types.Part(text=f"answer {turn}"), f"{author}/answer", delta),
    ]
    return [
        Event(
            id=event_id(first_index + offset),
            invocation_id=invocation,
            author=who,
            timestamp=at + offset * 0.001,
            content=types.Content(role=role, parts=[part]),
            node_info=NodeInfo(path=path),
            actions=EventActions(state_delta=state),
        )
        for offset, (who, role, part, path, state) in enumerate(contents)
    ]


def long_session_events(count: int, author: str = "assistant") -> list[Event]:
    """``count`` events (whole turns, the last one cut short if needed), oldest first."""
    start = time.time() - count
    events: list[Event] = []
    turn = 1
    while len(events) < count:
        events += turn_events(turn, len(events), start + len(events), author)
        turn += 1
    return events[:count]


async def seed_long_session(
    service: BaseSessionService,
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    count: int,
    initial_state: dict[str, Any] | None = None,
) -> Session:
    """A session of ``count`` events, stored in one step."""
    return await service.import_session(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        events=long_session_events(count),
        initial_state=initial_state,
    )
