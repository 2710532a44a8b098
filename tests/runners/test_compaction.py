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


async def test_a_new_process_reads_from_the_newest_summary_and_builds_the_same_prompt(
    tmp_path: Any,
) -> None:
    from cairn import SqliteSessionService
    from cairn.agents.context import CallbackContext

    seen: list[int] = []

    def count(callback_context: CallbackContext) -> None:
        seen.append(len(callback_context.session.events))

    def app_with(chat: ScriptedLlm) -> App:
        config = EventsCompactionConfig(
            compaction_interval=5,
            overlap_size=1,
            summarizer=LlmEventSummarizer(ScriptedLlm(respond=summarise)),
        )
        agent = Agent(name="pal", model=chat, before_agent_callback=count)
        return App(name=APP, root_agent=agent, events_compaction_config=config)

    store = SqliteSessionService(tmp_path / "sessions.db")
    warm_chat = ScriptedLlm(respond=lambda request: "ok")
    warm = Runner(app=app_with(warm_chat), session_service=store)
    await store.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    for turn in range(300):
        text = "Hi, I am Ada." if turn == 0 else f"message {turn}"
        async for _ in warm.run_async(user_id=USER, session_id=SESSION, new_message=said(text)):
            pass
    await store.fork_session(app_name=APP, user_id=USER, session_id=SESSION, new_session_id="twin")

    async for _ in warm.run_async(user_id=USER, session_id=SESSION, new_message=said("last")):
        pass
    cold_chat = ScriptedLlm(respond=lambda request: "ok")
    cold = Runner(app=app_with(cold_chat), session_service=store)  # a new process
    async for _ in cold.run_async(user_id=USER, session_id="twin", new_message=said("last")):
        pass

    assert seen[-2] > 600  # the warm runner holds the whole history it read turn by turn
    assert seen[-1] < 30  # the new one read from the newest summary onward
    assert cold_chat.requests[-1].contents == warm_chat.requests[-1].contents
    assert "Ada" in (cold_chat.requests[-1].contents[0].parts[0].text or "")
    await store.close()
