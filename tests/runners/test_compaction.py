"""History compaction: summaries replace old events in prompts; the log keeps them all."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn import Agent, App, InMemorySessionService, LlmResponse, Runner
from cairn.apps import EventsCompactionConfig, LlmEventSummarizer
from cairn.models.llm_request import LlmRequest
from cairn.testing import ScriptedLlm

APP, USER, SESSION = "chat", "u1", "s1"


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def summarise(request: LlmRequest) -> str:
    """A summarizer model that keeps the one fact that matters: the user's name."""
    prompt = request.contents[0].parts[0].text or ""
    return "The user is called Ada." if "Ada" in prompt else "Nothing to remember."


async def test_a_2000_turn_conversation_keeps_its_prompts_bounded() -> None:
    chat = ScriptedLlm(respond=lambda request: f"reply {len(request.contents)}")
    summaries = ScriptedLlm(respond=summarise)
    config = EventsCompactionConfig(
        compaction_interval=10, overlap_size=2, summarizer=LlmEventSummarizer(summaries)
    )
    app = App(name=APP, root_agent=Agent(name="pal", model=chat), events_compaction_config=config)
    store = InMemorySessionService()
    runner = Runner(app=app, session_service=store)
    await store.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    for turn in range(2000):
        text = "Hi, I am Ada." if turn == 0 else f"message {turn}"
        async for _ in runner.run_async(user_id=USER, session_id=SESSION, new_message=said(text)):
            pass
    sizes = [len(request.contents) for request in chat.requests]
    assert max(sizes[100:]) <= 2 * (10 + 2) + 1  # a summary plus at most 12 turns
    last = chat.requests[-1].contents
    assert last[0].parts[0].text == (
        "Summary of the earlier conversation:\nThe user is called Ada."
    )  # turn 1's fact survives ~200 summaries, each folding in the one before
    session = await store.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    assert session is not None
    compactions = [e for e in session.events if e.actions.compaction is not None]
    assert len(compactions) >= 150 and not any(e.is_final_response() for e in compactions)
    assert len(session.events) == 4000 + len(compactions)  # every event is still in the log
    assert len(summaries.requests) == len(compactions)


async def test_a_large_prompt_triggers_a_summary_keeping_recent_events() -> None:
    def answer(request: LlmRequest) -> Any:
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=100 * len(request.contents)
        )
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text="ok")]),
            usage_metadata=usage,
        )

    chat = ScriptedLlm(respond=answer)
    config = EventsCompactionConfig(
        token_threshold=1000,
        event_retention_size=4,
        summarizer=LlmEventSummarizer(ScriptedLlm(respond=lambda r: "earlier: small talk")),
    )
    app = App(name=APP, root_agent=Agent(name="pal", model=chat), events_compaction_config=config)
    store = InMemorySessionService()
    runner = Runner(app=app, session_service=store)
    await store.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    for turn in range(12):
        async for _ in runner.run_async(
            user_id=USER, session_id=SESSION, new_message=said(f"message {turn}")
        ):
            pass
    sizes = [len(request.contents) for request in chat.requests]
    assert sizes[:5] == [1, 3, 5, 7, 9]  # 900 tokens: below the threshold
    assert sizes[5] == 11  # 1,100 tokens: a summary follows this turn
    assert sizes[6] == 1 + 4 + 1  # the summary, the 4 retained events, the new message
    assert max(sizes) <= 11
