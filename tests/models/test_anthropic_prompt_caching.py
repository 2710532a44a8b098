"""Claude prompt caching with ``App.context_cache_config``, as ADK does it: ``cache_control``
breakpoints on the last tool, the system prompt and the last message block of the Messages API
request (asserted on the body cairn sends; replies replayed from recordings)."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

pytest.importorskip("anthropic")

from tests.models.test_anthropic_llm import RecordedApi, Reply, collect, make_llm, user

from cairn import Agent, App, InMemoryRunner
from cairn.agents.context_cache_config import ContextCacheConfig
from cairn.models import LlmRequest

FIVE_MINUTES = {"type": "ephemeral"}
AN_HOUR = {"type": "ephemeral", "ttl": "1h"}
WEATHER = types.FunctionDeclaration(
    name="get_weather",
    description="The weather in a city.",
    parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)
TIME = types.FunctionDeclaration(name="get_time", description="The time now.")


def request(**fields: Any) -> LlmRequest:
    return LlmRequest(
        contents=[
            user("What's the weather in Beijing?"),
            types.Content(role="model", parts=[types.Part(text="Let me check.")]),
            user("In Fahrenheit, please."),
        ],
        config=types.GenerateContentConfig(
            system_instruction="You report the weather.",
            tools=[types.Tool(function_declarations=[TIME, WEATHER])],
        ),
        **fields,
    )


async def sent_body(llm_request: LlmRequest) -> dict[str, Any]:
    api = RecordedApi(Reply(200, "tool_use.json"))
    await collect(make_llm(api), llm_request, stream=False)
    [body] = api.bodies
    return body


async def test_the_tools_system_prompt_and_conversation_each_end_in_a_breakpoint() -> None:
    body = await sent_body(request(cache_config=ContextCacheConfig()))

    assert [t.get("cache_control") for t in body["tools"]] == [None, FIVE_MINUTES]
    assert body["system"] == [
        {"type": "text", "text": "You report the weather.", "cache_control": FIVE_MINUTES}
    ]
    last_message = body["messages"][-1]
    assert last_message["content"][-1] == {
        "type": "text",
        "text": "In Fahrenheit, please.",
        "cache_control": FIVE_MINUTES,
    }
    marked = [
        block
        for message in body["messages"]
        for block in message["content"]
        if "cache_control" in block
    ]
    assert len(marked) == 1  # one breakpoint in the conversation (Claude allows four in all)


async def test_a_ttl_of_an_hour_or_more_asks_for_the_hour_long_cache() -> None:
    body = await sent_body(request(cache_config=ContextCacheConfig(ttl_seconds=7200)))
    assert body["tools"][-1]["cache_control"] == AN_HOUR
    assert body["system"][0]["cache_control"] == AN_HOUR
    assert body["messages"][-1]["content"][-1]["cache_control"] == AN_HOUR


async def test_no_breakpoint_without_a_config_or_below_min_tokens() -> None:
    for llm_request in (
        request(),
        request(
            cache_config=ContextCacheConfig(min_tokens=4096), cacheable_contents_token_count=1200
        ),
    ):
        body = await sent_body(llm_request)
        assert body["system"] == "You report the weather."
        assert "cache_control" not in str(body)


async def test_the_first_turn_is_marked_though_no_prompt_was_measured_yet() -> None:
    body = await sent_body(request(cache_config=ContextCacheConfig(min_tokens=4096)))
    assert body["system"][0]["cache_control"] == FIVE_MINUTES


async def test_cache_reads_count_in_the_prompt_and_as_cached_tokens() -> None:
    api = RecordedApi(Reply(200, "tool_use.json"))
    [response] = await collect(make_llm(api), request(cache_config=ContextCacheConfig()), False)
    usage = response.usage_metadata
    assert usage is not None
    assert usage.prompt_token_count == 412 + 1800 and usage.cached_content_token_count == 1800


async def test_an_apps_context_cache_config_reaches_claudes_request() -> None:
    api = RecordedApi(Reply(200, "text.json"))
    agent = Agent(name="guide", model=make_llm(api), instruction="You describe cities.")
    app = App(name="cities", root_agent=agent, context_cache_config=ContextCacheConfig())
    runner = InMemoryRunner(app=app)
    await runner.session_service.create_session(app_name="cities", user_id="u", session_id="s")
    async for _ in runner.run_async(user_id="u", session_id="s", new_message=user("Hangzhou?")):
        pass
    [body] = api.bodies
    assert body["system"] == [
        {"type": "text", "text": "You describe cities.", "cache_control": FIVE_MINUTES}
    ]
    assert body["messages"][-1]["content"][-1]["cache_control"] == FIVE_MINUTES
