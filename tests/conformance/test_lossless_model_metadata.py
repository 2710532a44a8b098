"""Guarantee 10 for what a model's reply carries besides its text: the grounding of a search,
the URLs url_context fetched, a context cache, and code the model ran come back from every
store exactly as they were appended (camelCase JSON, the cache's snake_case keys inside)."""

from __future__ import annotations

import json
from pathlib import Path

from google.genai import types

from cairn import Event
from cairn.events.cache_metadata import CacheMetadata
from cairn.sessions import BaseSessionService

APP, USER = "lossless", "u1"
RECORDINGS = Path(__file__).resolve().parent.parent / "models" / "recordings" / "gemini"


def recorded_candidate(name: str) -> dict[str, object]:
    recording = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))
    candidate: dict[str, object] = recording["exchanges"][0]["response"]["body"]["candidates"][0]
    return candidate


def model_reply() -> Event:
    search = recorded_candidate("google_search")
    reading = recorded_candidate("url_context")
    code = recorded_candidate("code_execution")
    return Event(
        invocation_id="e-1",
        author="researcher",
        content=types.Content.model_validate(code["content"]),
        grounding_metadata=types.GroundingMetadata.model_validate(search["groundingMetadata"]),
        url_context_metadata=types.UrlContextMetadata.model_validate(reading["urlContextMetadata"]),
        cache_metadata=CacheMetadata(
            cache_name="cachedContents/k3x9q2lq0v7f",
            expire_time=1751373002.050199,
            fingerprint="9f2c4e1a7b3d5c60",
            invocations_used=3,
            contents_count=4,
            created_at=1751371202.104862,
        ),
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=6031, cached_content_token_count=6012, candidates_token_count=10
        ),
    )


async def test_lossless_json_grounding_url_context_cache_and_code_parts_come_back_exactly(
    store: BaseSessionService,
) -> None:
    session = await store.create_session(app_name=APP, user_id=USER)
    sent = model_reply()
    await store.append_event(session, sent)
    fingerprint_only = Event(
        invocation_id="e-2",
        author="researcher",
        content=types.Content(role="model", parts=[types.Part(text="ok")]),
        cache_metadata=CacheMetadata(fingerprint="0011223344556677", contents_count=0),
    )
    await store.append_event(session, fingerprint_only)

    loaded = await store.get_session(app_name=APP, user_id=USER, session_id=session.id)
    assert loaded is not None
    back, back_fingerprint = loaded.events
    assert back.model_dump(mode="json") == sent.model_dump(mode="json")
    assert back.grounding_metadata == sent.grounding_metadata
    assert back.url_context_metadata == sent.url_context_metadata
    assert back.cache_metadata == sent.cache_metadata
    assert back.content == sent.content
    assert back_fingerprint.cache_metadata == fingerprint_only.cache_metadata
    wire = json.loads(back.to_json())
    assert wire["groundingMetadata"] == recorded_candidate("google_search")["groundingMetadata"]
    assert wire["cacheMetadata"]["cache_name"] == "cachedContents/k3x9q2lq0v7f"
