"""Gemini context caching (``App.context_cache_config``) against recorded Gemini API exchanges:
the requests cairn sends (cache creation, the turns naming the cache, deletion) are asserted
body by body; the cache found by a later turn comes from the session's log, in a new runner
and store as a new process would have them.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from pydantic import ValidationError
from tests.models.test_google_llm import (  # noqa: F401 - clean_environment is autouse
    Replay,
    clean_environment,
    gemini,
)

from cairn import Agent, App, Event, Runner
from cairn.agents.context_cache_config import ContextCacheConfig
from cairn.agents.run_config import RunConfig, StreamingMode
from cairn.models.cache_metadata import CacheMetadata
from cairn.sessions import SqliteSessionService

APP, USER, SESSION = "shop", "u1", "s1"
RULES = "You answer questions about the shop's rules. The rules:\n" + "\n".join(
    f"Rule {n}: " + "a long paragraph of rule text that the model must keep in mind. " * 12
    for n in range(1, 31)
)
CACHE_NAME = "cachedContents/k3x9q2lq0v7f"
CACHE_EXPIRES = datetime.fromisoformat("2025-07-01T12:30:02.050199+00:00").timestamp()
AT_NOON = datetime.fromisoformat("2025-07-01T12:00:01+00:00").timestamp()
AN_HOUR_LATER = datetime.fromisoformat("2025-07-01T13:00:04+00:00").timestamp()


def lookup_order(order_id: str) -> dict[str, str]:
    """Look up an order.

    Args:
        order_id: the order's id.
    """
    return {"order_id": order_id, "status": "shipped"}


class Shop:
    """An app with caching on, on one SQLite file; each ``turn`` runs in a new runner, store
    and model object (as another process would), against one recorded server."""

    def __init__(self, tmp_path: Path, replay: Replay, **cache: Any) -> None:
        self.db = tmp_path / "sessions.db"
        self.replay = replay
        self.cache = ContextCacheConfig(**cache)
        self.now = AT_NOON
        self.instruction = RULES

    async def turn(self, text: str, **run: Any) -> list[Event]:
        model = gemini(self.replay, clock=lambda: self.now)
        agent = Agent(name="clerk", model=model, instruction=self.instruction, tools=[lookup_order])
        app = App(name=APP, root_agent=agent, context_cache_config=self.cache)
        store = SqliteSessionService(self.db)
        try:
            if await store.get_session(app_name=APP, user_id=USER, session_id=SESSION) is None:
                await store.create_session(app_name=APP, user_id=USER, session_id=SESSION)
            runner = Runner(app=app, session_service=store)
            message = types.Content(role="user", parts=[types.Part(text=text)])
            return [
                e
                async for e in runner.run_async(
                    user_id=USER, session_id=SESSION, new_message=message, **run
                )
            ]
        finally:
            await store.close()

    async def stored_metadata(self) -> list[CacheMetadata | None]:
        store = SqliteSessionService(self.db)
        session = await store.get_session(app_name=APP, user_id=USER, session_id=SESSION)
        await store.close()
        assert session is not None
        return [e.cache_metadata for e in session.events if e.author == "clerk"]


def replay_of(*parts: tuple[str, slice]) -> Replay:
    """A server that plays the given exchanges of several recordings, in order."""
    replay = Replay(parts[0][0])
    replay.exchanges = [x for name, which in parts for x in Replay(name).exchanges[which]]
    return replay


def texts(content: dict[str, Any]) -> list[str]:
    return [part["text"] for part in content["parts"]]


async def test_the_second_turn_creates_a_cache_and_the_third_reuses_it(tmp_path: Path) -> None:
    shop = Shop(tmp_path, Replay("context_cache_turns"), min_tokens=1000)

    [first] = await shop.turn("What does rule 7 say?")
    whole = shop.replay.sent(0)
    assert "cachedContent" not in whole and whole["systemInstruction"]["parts"][0]["text"] == RULES
    assert first.cache_metadata is not None and first.cache_metadata.cache_name is None
    assert first.cache_metadata.contents_count == 0  # nothing before the question yet

    [second] = await shop.turn("And rule 12?")
    created = shop.replay.sent(1)
    assert shop.replay.requests[1].url.path == "/v1beta/cachedContents"
    assert created["model"] == "models/gemini-2.5-flash" and created["ttl"] == "1800s"
    assert created["systemInstruction"]["parts"][0]["text"] == RULES
    assert [d["name"] for d in created["tools"][0]["functionDeclarations"]] == ["lookup_order"]
    assert [(c["role"], texts(c)) for c in created["contents"]] == [
        ("user", ["What does rule 7 say?"]),
        ("model", ["Rule 7 says refunds are issued within 14 days."]),
    ]
    named = shop.replay.sent(2)
    assert named["cachedContent"] == CACHE_NAME
    assert "systemInstruction" not in named and "tools" not in named  # they are in the cache
    assert [texts(c) for c in named["contents"]] == [["And rule 12?"]]
    active = second.cache_metadata
    assert active is not None and active.cache_name == CACHE_NAME
    assert active.expire_time == CACHE_EXPIRES  # as the server set it
    assert (active.invocations_used, active.contents_count, active.created_at) == (1, 2, AT_NOON)
    assert second.usage_metadata is not None
    assert second.usage_metadata.cached_content_token_count == 6012

    [third] = await shop.turn("And rule 3?")
    assert len(shop.replay.requests) == 4  # no new cache
    reused = shop.replay.sent(3)
    assert reused["cachedContent"] == CACHE_NAME and "systemInstruction" not in reused
    assert [texts(c) for c in reused["contents"]] == [
        ["And rule 12?"],
        ["Rule 12 says exchanges need a receipt."],
        ["And rule 3?"],
    ]
    assert third.cache_metadata is not None
    assert third.cache_metadata.invocations_used == 2  # a new invocation used it
    assert third.cache_metadata.fingerprint == active.fingerprint
    assert await shop.stored_metadata() == [
        first.cache_metadata,
        second.cache_metadata,
        third.cache_metadata,
    ]


@pytest.mark.parametrize("why", ["expired", "used cache_intervals times"])
async def test_a_stale_cache_is_deleted_and_made_anew_for_the_same_head(
    tmp_path: Path, why: str
) -> None:
    replay = replay_of(("context_cache_turns", slice(0, 3)), ("context_cache_expired", slice(None)))
    intervals = 10 if why == "expired" else 1
    shop = Shop(tmp_path, replay, min_tokens=1000, cache_intervals=intervals)
    await shop.turn("What does rule 7 say?")
    await shop.turn("And rule 12?")
    if why == "expired":
        shop.now = AN_HOUR_LATER
    else:  # a second invocation on a cache that may serve one; still within its lifetime
        shop.now = AT_NOON + 60
    [third] = await shop.turn("Do gift cards expire?")

    deleted = replay.requests[3]
    assert (deleted.method, deleted.url.path) == ("DELETE", f"/v1beta/{CACHE_NAME}")
    recreated = replay.sent(4)
    assert len(recreated["contents"]) == 4  # the head grew to every content before the question
    assert recreated["systemInstruction"]["parts"][0]["text"] == RULES
    named = replay.sent(5)
    assert named["cachedContent"] == "cachedContents/p8w1m4zt5c2d"
    assert [texts(c) for c in named["contents"]] == [["Do gift cards expire?"]]
    assert third.cache_metadata is not None
    assert third.cache_metadata.cache_name == "cachedContents/p8w1m4zt5c2d"
    assert third.cache_metadata.invocations_used == 1
    assert third.cache_metadata.contents_count == 4


async def test_a_cache_the_api_refuses_to_make_leaves_the_turn_uncached(tmp_path: Path) -> None:
    replay = replay_of(
        ("context_cache_turns", slice(0, 1)), ("context_cache_create_refused", slice(None))
    )
    shop = Shop(tmp_path, replay)
    await shop.turn("What does rule 7 say?")
    [second] = await shop.turn("And rule 12?")

    assert replay.requests[1].url.path == "/v1beta/cachedContents"
    uncached = replay.sent(2)
    assert "cachedContent" not in uncached
    assert uncached["systemInstruction"]["parts"][0]["text"] == RULES
    assert len(uncached["contents"]) == 3
    assert second.content is not None and second.error_code is None
    # The head is remembered, so that the next turn tries again.
    assert second.cache_metadata is not None and second.cache_metadata.cache_name is None
    assert second.cache_metadata.contents_count == 2


async def test_a_prompt_below_min_tokens_is_not_cached(tmp_path: Path) -> None:
    replay = replay_of(
        ("context_cache_turns", slice(0, 1)), ("context_cache_create_refused", slice(1, 2))
    )
    shop = Shop(tmp_path, replay, min_tokens=10_000)  # the first prompt measured 6,004
    await shop.turn("What does rule 7 say?")
    [second] = await shop.turn("And rule 12?")

    assert [r.url.path for r in replay.requests] == [
        "/v1beta/models/gemini-2.5-flash:generateContent"
    ] * 2
    assert "cachedContent" not in replay.sent(1)
    assert second.cache_metadata is not None and second.cache_metadata.cache_name is None


async def test_a_changed_instruction_starts_over_without_a_cache(tmp_path: Path) -> None:
    replay = replay_of(
        ("context_cache_turns", slice(0, 1)), ("context_cache_create_refused", slice(1, 2))
    )
    shop = Shop(tmp_path, replay)
    [first] = await shop.turn("What does rule 7 say?")
    shop.instruction = RULES + "\nRule 31: a new rule."
    [second] = await shop.turn("And rule 12?")
    assert len(replay.requests) == 2 and "cachedContent" not in replay.sent(1)
    assert second.cache_metadata is not None and first.cache_metadata is not None
    assert second.cache_metadata.fingerprint != first.cache_metadata.fingerprint


async def test_a_streamed_turn_on_a_cache_carries_the_cache_on_its_final_event(
    tmp_path: Path,
) -> None:
    replay = replay_of(("context_cache_turns", slice(0, 3)), ("stream_context_cache", slice(None)))
    shop = Shop(tmp_path, replay, min_tokens=1000)
    await shop.turn("What does rule 7 say?")
    await shop.turn("And rule 12?")
    events = await shop.turn("And rule 3?", run_config=RunConfig(streaming_mode=StreamingMode.SSE))

    *partials, final = events
    assert partials and all(p.partial and p.cache_metadata is None for p in partials)
    assert replay.sent(3)["cachedContent"] == CACHE_NAME
    assert final.cache_metadata is not None and final.cache_metadata.cache_name == CACHE_NAME
    assert final.cache_metadata.invocations_used == 2
    assert (await shop.stored_metadata())[-1] == final.cache_metadata


async def test_without_a_cache_config_nothing_about_caching_is_sent_or_recorded(
    tmp_path: Path,
) -> None:
    replay = Replay("context_cache_turns")
    agent = Agent(name="clerk", model=gemini(replay), instruction=RULES)
    store = SqliteSessionService(tmp_path / "s.db")
    await store.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    runner = Runner(app=App(name=APP, root_agent=agent), session_service=store)
    [event] = [
        e
        async for e in runner.run_async(
            user_id=USER,
            session_id=SESSION,
            new_message=types.Content(role="user", parts=[types.Part(text="Rule 7?")]),
        )
    ]
    assert event.cache_metadata is None and "cachedContent" not in replay.sent()
    await store.close()


def test_the_config_has_adks_fields_defaults_and_bounds() -> None:
    config = ContextCacheConfig()
    assert (config.cache_intervals, config.ttl_seconds, config.min_tokens) == (10, 1800, 0)
    assert config.ttl_string == "1800s" and config.create_http_options is None
    for bad in ({"cache_intervals": 0}, {"cache_intervals": 101}, {"ttl_seconds": 0}):
        with pytest.raises(ValidationError):
            ContextCacheConfig(**bad)
    with pytest.raises(ValidationError):
        ContextCacheConfig(ttl=60)  # type: ignore[call-arg]


def test_cache_metadata_is_active_or_a_fingerprint_and_serializes_as_adk_does() -> None:
    with pytest.raises(ValidationError, match="either an active cache"):
        CacheMetadata(cache_name="cachedContents/x", fingerprint="f", contents_count=1)
    active = CacheMetadata(
        cache_name="cachedContents/x",
        expire_time=2.5e9,
        fingerprint="0123456789abcdef",
        invocations_used=1,
        contents_count=2,
        created_at=2.4e9,
    )
    assert not active.expire_soon
    event = Event(author="clerk", cache_metadata=active)
    dumped = event.model_dump(mode="json", exclude_none=True)
    assert dumped["cacheMetadata"]["cache_name"] == "cachedContents/x"  # snake_case inside
    assert Event.model_validate_json(event.model_dump_json()).cache_metadata == active
