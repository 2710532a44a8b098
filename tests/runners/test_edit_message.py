"""Runner.edit_message_async: replace an earlier user turn and run again from there."""

from __future__ import annotations

import pytest
from google.genai import types

from cairn import Agent, InMemoryRunner
from cairn.testing import ScriptedLlm


def _text(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def test_editing_a_turn_rewinds_it_and_answers_the_new_message() -> None:
    llm = ScriptedLlm(respond=lambda request: f"seen {request.contents[-1].parts[0].text}")
    runner = InMemoryRunner(agent=Agent(name="echo", model=llm), app_name="app")
    service = runner.session_service
    session = await service.create_session(app_name="app", user_id="u")
    for text in ("first", "second"):
        async for _ in runner.run_async(
            user_id="u", session_id=session.id, new_message=_text(text)
        ):
            pass
    stored = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None
    first = next(e.invocation_id for e in stored.events if e.author == "user")

    events = [
        e
        async for e in runner.edit_message_async(
            user_id="u", session_id=session.id, invocation_id=first, new_message=_text("edited")
        )
    ]
    assert [e.content.parts[0].text for e in events if e.content] == ["seen edited"]
    stored = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None
    live = stored.filter_events()
    assert [e.content.parts[0].text for e in live if e.content] == ["edited", "seen edited"]


async def test_editing_an_invocation_without_a_user_message_is_refused() -> None:
    runner = InMemoryRunner(agent=Agent(name="echo", model=ScriptedLlm(script=[])), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    with pytest.raises(ValueError, match="No user message found"):
        async for _ in runner.edit_message_async(
            user_id="u", session_id=session.id, invocation_id="nope", new_message=_text("x")
        ):
            pass
