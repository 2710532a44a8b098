"""OpenAIResponsesLlm / AzureOpenAIResponsesLlm against recorded Responses API exchanges, and
ADK's OpenAILlm for gpt-* names; no network.

recordings/openai_responses/ holds the exchanges in the API's wire format (see its README);
``Replay`` serves them in order through ``httpx2.MockTransport`` and keeps what was sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import openai
import pydantic
import pytest
from google.genai import types
from tests.models.test_openai_llm import Replay, Sleeps

from cairn import Agent, App, Runner
from cairn.integrations.openai import (
    AzureOpenAIResponsesLlm,
    OpenAIGenerateContentConfig,
    OpenAILlm,
    OpenAIResponsesLlm,
)
from cairn.models import LLMRegistry, LlmRequest, LlmResponse
from cairn.models.errors import MissingApiKeyError, ModelCallError
from cairn.models.openai_config import UnsupportedReasoningEffortError
from cairn.models.openai_responses_llm import AzureOpenAIConfigurationError
from cairn.sessions import SqliteSessionService

RECORDINGS = Path(__file__).parent / "recordings" / "openai_responses"
KEY = "sk-test-responses-0123456789abcdef"


def replay(name: str) -> Replay:
    return Replay(name, RECORDINGS)


def make_llm(recorded: Replay, **fields: Any) -> tuple[OpenAIResponsesLlm, Sleeps]:
    fields.setdefault("api_key", KEY)
    fields.setdefault("model", "gpt-5-mini")
    llm = OpenAIResponsesLlm(http_client=recorded.client(), **fields)
    sleeps = Sleeps()
    llm._sleep = sleeps
    return llm, sleeps


async def collect(llm: Any, request: LlmRequest, stream: bool = False) -> list[LlmResponse]:
    return [response async for response in llm.generate_content_async(request, stream=stream)]


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def texts(response: LlmResponse) -> list[tuple[str | None, bool]]:
    assert response.content is not None and response.content.parts
    return [(part.text, bool(part.thought)) for part in response.content.parts]


def answering(status: int, body: dict[str, Any]) -> tuple[list[httpx2.Request], httpx2.AsyncClient]:
    """A transport that answers every request with ``status`` and ``body``."""
    sent: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(status, json=body)

    return sent, httpx2.AsyncClient(transport=httpx2.MockTransport(answer))


def recorded_body(name: str, index: int = 0) -> dict[str, Any]:
    exchanges = json.loads((RECORDINGS / f"{name}.json").read_text())["exchanges"]
    body: dict[str, Any] = exchanges[index]["response"]["body"]
    return body


@pytest.fixture(autouse=True)
def no_openai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)


# --- text and streaming ----------------------------------------------------------------------


async def test_a_text_answer_with_instructions_settings_and_usage() -> None:
    recorded = replay("text")
    llm, _ = make_llm(recorded, model="gpt-4.1-mini")
    request = LlmRequest(
        contents=[user("Name the capital of France.")],
        config=types.GenerateContentConfig(
            system_instruction="You are a terse assistant.",
            temperature=0.2,
            top_p=0.9,
            max_output_tokens=64,
            stop_sequences=["END"],
        ),
    )

    [response] = await collect(llm, request)

    recorded.assert_requests_as_recorded()
    sent = recorded.requests[0]
    assert sent.url == "https://api.openai.com/v1/responses"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert texts(response) == [("Paris.", False)]
    assert response.partial is not True and response.error_code is None
    assert response.finish_reason == types.FinishReason.STOP
    assert response.model_version == "gpt-4.1-mini-2025-04-14"
    assert response.interaction_id == "resp_68e4b1c2d3a48190a1b2c3d4e5f60718"
    usage = response.usage_metadata
    assert usage is not None
    assert (usage.prompt_token_count, usage.candidates_token_count, usage.total_token_count) == (
        31,
        3,
        34,
    )
    metadata = (response.custom_metadata or {})["openai_response"]
    assert metadata["id"] == response.interaction_id and metadata["status"] == "completed"
    assert [item["type"] for item in metadata["output"]] == ["message"]


async def test_no_response_metadata_when_turned_off() -> None:
    recorded = replay("text")
    llm, _ = make_llm(recorded, model="gpt-4.1-mini", include_response_metadata=False)
    request = LlmRequest(
        contents=[user("Name the capital of France.")],
        config=types.GenerateContentConfig(
            system_instruction="You are a terse assistant.",
            temperature=0.2,
            top_p=0.9,
            max_output_tokens=64,
            stop_sequences=["END"],
        ),
    )

    [response] = await collect(llm, request)

    assert response.custom_metadata is None
    assert response.interaction_id == "resp_68e4b1c2d3a48190a1b2c3d4e5f60718"


async def test_a_streamed_answer_yields_its_deltas_then_the_whole_answer() -> None:
    recorded = replay("stream_text")
    llm, _ = make_llm(recorded)

    responses = await collect(llm, LlmRequest(contents=[user("Say hello.")]), stream=True)

    recorded.assert_requests_as_recorded()
    *partials, final = responses
    assert [texts(p) for p in partials] == [[("Hello", False)], [(" there!", False)]]
    assert all(p.partial is True for p in partials)
    assert {p.interaction_id for p in partials} == {"resp_68e4b2a0c1d28190aa11bb22cc33dd44"}
    assert final.partial is not True and final.turn_complete is True
    assert texts(final) == [("Hello there!", False)]
    assert final.usage_metadata is not None and final.usage_metadata.total_token_count == 13


# --- reasoning -------------------------------------------------------------------------------


async def test_reasoning_effort_is_sent_and_the_summary_comes_back_as_thought_parts() -> None:
    recorded = replay("stream_reasoning")
    llm, _ = make_llm(recorded, model="o4-mini")
    request = LlmRequest(
        contents=[user("What is 17 + 25?")],
        config=OpenAIGenerateContentConfig(effort="high"),
    )

    *partials, final = await collect(llm, request, stream=True)

    recorded.assert_requests_as_recorded()  # reasoning: {"effort": "high", "summary": "concise"}
    assert [texts(p) for p in partials] == [
        [("**Adding numbers**\n\n", True)],
        [("17 plus 25 is 42.", True)],
        [("42", False)],
    ]
    assert texts(final) == [("**Adding numbers**\n\n17 plus 25 is 42.", True), ("42", False)]
    usage = final.usage_metadata
    assert usage is not None and usage.thoughts_token_count == 192
    metadata = (final.custom_metadata or {})["openai_response"]
    assert metadata["reasoning"] == [{"id": "rs_68e4b4f1e2f38190b1b2b3b4b5b6b7b8"}]


async def test_an_effort_the_model_does_not_take_is_refused_before_sending() -> None:
    sent, client = answering(200, {})
    llm = OpenAIResponsesLlm(model="o4-mini", api_key=KEY, http_client=client)

    with pytest.raises(UnsupportedReasoningEffortError) as raised:
        await collect(
            llm, LlmRequest(contents=[user("Hi")], config=OpenAIGenerateContentConfig(effort="max"))
        )

    assert sent == []
    assert "'o4-mini'" in str(raised.value) and "high, low, medium" in str(raised.value)


def test_the_openai_config_refuses_a_thinking_config() -> None:
    with pytest.raises(pydantic.ValidationError, match="effort="):
        OpenAIGenerateContentConfig(thinking_config=types.ThinkingConfig(thinking_budget=512))


async def test_the_instance_reasoning_is_kept_and_its_effort_replaced() -> None:
    sent, client = answering(200, recorded_body("rate_limited_then_text", 1))
    llm = OpenAIResponsesLlm(
        model="gpt-5-mini",
        api_key=KEY,
        http_client=client,
        reasoning={"effort": "low", "summary": "detailed"},
        store=False,
        extra_request_args={"metadata": {"ticket": "T-1"}, "extra_body": {"verbosity": "low"}},
    )

    await collect(
        llm, LlmRequest(contents=[user("Hi")], config=OpenAIGenerateContentConfig(effort="minimal"))
    )

    body = json.loads(sent[0].content)
    assert body["reasoning"] == {"effort": "minimal", "summary": "detailed"}
    assert body["store"] is False and body["metadata"] == {"ticket": "T-1"}
    assert body["verbosity"] == "low"


# --- a tool call and its follow-up, through an agent on SQLite --------------------------------


async def test_a_tool_call_and_its_follow_up_through_an_agent_on_sqlite(tmp_path: Path) -> None:
    recorded = replay("tool_round_trip")
    llm, _ = make_llm(recorded)
    calls: list[str] = []

    def get_weather(city: str) -> dict[str, Any]:
        """The weather in a city."""
        calls.append(city)
        return {"city": city, "sky": "sunny", "celsius": 21}

    agent = Agent(
        name="forecaster",
        model=llm,
        instruction="Answer with the weather tool.",
        tools=[get_weather],
    )
    database = tmp_path / "sessions.db"
    service = SqliteSessionService(str(database))
    runner = Runner(app=App(name="weather", root_agent=agent), session_service=service)
    await service.create_session(app_name="weather", user_id="ada", session_id="s1")

    events = [
        event
        async for event in runner.run_async(
            user_id="ada", session_id="s1", new_message=user("What is the weather in Paris?")
        )
    ]

    recorded.assert_requests_as_recorded()  # the follow-up pairs the output by call_id
    assert calls == ["Paris"]
    assert events[-1].content is not None
    assert events[-1].content.parts[0].text == "It is sunny in Paris, 21 °C."  # type: ignore[index]
    stored = await SqliteSessionService(str(database)).get_session(
        app_name="weather", user_id="ada", session_id="s1"
    )
    assert stored is not None
    function_calls = [c for e in stored.events for c in e.get_function_calls()]
    function_responses = [r for e in stored.events for r in e.get_function_responses()]
    assert [c.id for c in function_calls] == ["call_Qm3xT8vLk2PzR7wN1sYb"]
    assert [r.id for r in function_responses] == ["call_Qm3xT8vLk2PzR7wN1sYb"]
    assert stored.events[-1].interaction_id == "resp_68e4b3e2b2c38190ff66778899001122"


async def test_call_ids_the_api_refuses_are_replaced_consistently_and_missing_ones_paired() -> None:
    sent, client = answering(200, recorded_body("rate_limited_then_text", 1))
    llm = OpenAIResponsesLlm(model="gpt-5-mini", api_key=KEY, http_client=client)
    history = [
        user("Weather?"),
        types.Content(
            role="model",
            parts=[
                types.Part(thought=True, text="I should look it up."),
                types.Part(function_call=types.FunctionCall(id="call:1/a", name="get_weather")),
                types.Part(function_call=types.FunctionCall(name="get_time")),
            ],
        ),
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="call:1/a", name="get_weather", response={"result": "sunny"}
                    )
                ),
                types.Part(
                    function_response=types.FunctionResponse(
                        name="get_time", response={"result": {"hour": 9}}
                    )
                ),
            ],
        ),
    ]

    await collect(llm, LlmRequest(contents=history))

    items = json.loads(sent[0].content)["input"]
    assert [item["type"] for item in items] == [
        "message",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    weather_call, time_call, weather_output, time_output = items[1:]
    assert weather_call["call_id"] == weather_output["call_id"] != "call:1/a"
    assert time_call["call_id"] == time_output["call_id"]
    assert weather_output["output"] == "sunny" and time_output["output"] == '{"hour": 9}'


# --- retries and errors ----------------------------------------------------------------------


async def test_a_429_is_retried_after_its_retry_after() -> None:
    recorded = replay("rate_limited_then_text")
    llm, sleeps = make_llm(recorded)

    [response] = await collect(llm, LlmRequest(contents=[user("Say hi.")]))

    recorded.assert_requests_as_recorded()
    assert sleeps.waits == [3.0]
    assert texts(response) == [("Hi!", False)]


async def test_a_400_is_a_typed_error_raised_at_once() -> None:
    recorded = replay("bad_request")
    llm, sleeps = make_llm(recorded)
    request = LlmRequest(
        contents=[user("Say hi.")], config=types.GenerateContentConfig(max_output_tokens=8)
    )

    with pytest.raises(ModelCallError) as raised:
        await collect(llm, request)

    recorded.assert_requests_as_recorded()
    error = raised.value
    assert sleeps.waits == [] and error.attempts == 1
    assert error.status_code == 400 and error.retryable is False and error.provider == "openai"
    assert "Expected a value >= 16" in str(error) and "gpt-5-mini" in str(error)
    assert KEY not in str(error)


async def test_an_error_event_before_any_output_is_retried() -> None:
    recorded = replay("stream_error_event")
    llm, sleeps = make_llm(recorded)

    *_, final = await collect(llm, LlmRequest(contents=[user("Say hi.")]), stream=True)

    recorded.assert_requests_as_recorded()
    assert len(sleeps.waits) == 1
    assert texts(final) == [("Hello there!", False)]


async def test_a_server_echoing_the_key_never_shows_it() -> None:
    _, client = answering(401, {"error": {"message": f"Incorrect API key provided: {KEY}."}})
    llm = OpenAIResponsesLlm(model="gpt-5-mini", api_key=KEY, http_client=client)

    with pytest.raises(ModelCallError) as raised:
        await collect(llm, LlmRequest(contents=[user("Hi")]))

    assert KEY not in str(raised.value) and "<api key>" in str(raised.value)
    assert "OPENAI_API_KEY or api_key=" in str(raised.value)


async def test_no_key_is_a_typed_error_naming_the_variable() -> None:
    llm = OpenAIResponsesLlm(model="gpt-5-mini")

    with pytest.raises(MissingApiKeyError, match="OPENAI_API_KEY"):
        await collect(llm, LlmRequest(contents=[user("Hi")]))


async def test_a_key_function_is_asked_before_each_request() -> None:
    sent, client = answering(200, recorded_body("rate_limited_then_text", 1))
    issued = iter(["sk-rotating-1", "sk-rotating-2"])
    llm = OpenAIResponsesLlm(model="gpt-5-mini", api_key=lambda: next(issued), http_client=client)

    for _ in range(2):
        await collect(llm, LlmRequest(contents=[user("Hi")]))

    assert [r.headers["authorization"] for r in sent] == [
        "Bearer sk-rotating-1",
        "Bearer sk-rotating-2",
    ]


# --- Azure -----------------------------------------------------------------------------------


async def test_azure_calls_the_resources_v1_endpoint_with_its_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-0123456789")
    sent, client = answering(200, recorded_body("rate_limited_then_text", 1))
    llm = AzureOpenAIResponsesLlm(
        model="my-gpt5-deployment",
        azure_endpoint="https://contoso.openai.azure.com/",
        http_client=client,
    )

    [response] = await collect(
        llm, LlmRequest(contents=[user("Hi")], config=OpenAIGenerateContentConfig(effort="max"))
    )

    assert str(sent[0].url) == "https://contoso.openai.azure.com/openai/v1/responses"
    assert sent[0].headers["authorization"] == "Bearer azure-key-0123456789"
    body = json.loads(sent[0].content)
    assert body["model"] == "my-gpt5-deployment"
    assert body["reasoning"]["effort"] == "max"  # a deployment's efforts are the server's to check
    assert texts(response) == [("Hi!", False)]


async def test_azure_without_an_endpoint_says_how_to_give_one() -> None:
    llm = AzureOpenAIResponsesLlm(model="my-deployment", api_key="azure-key")

    with pytest.raises(AzureOpenAIConfigurationError, match="azure_endpoint=") as raised:
        await collect(llm, LlmRequest(contents=[user("Hi")]))

    assert "AZURE_OPENAI_ENDPOINT" in str(raised.value) and "azure-key" not in str(raised.value)


async def test_azure_errors_name_azure_and_its_key_variable() -> None:
    _, client = answering(401, {"error": {"message": "Access denied due to invalid key."}})
    llm = AzureOpenAIResponsesLlm(
        model="dep",
        api_key="azure-key",
        azure_endpoint="https://x.openai.azure.com",
        http_client=client,
    )

    with pytest.raises(ModelCallError) as raised:
        await collect(llm, LlmRequest(contents=[user("Hi")]))

    assert raised.value.provider == "azure_openai"
    assert "AZURE_OPENAI_API_KEY or api_key=" in str(raised.value)


# --- ADK's OpenAILlm for gpt-* names (chat completions) ----------------------------------------

CHAT_COMPLETION = {
    "id": "chatcmpl-AT22dZ6mS1oRb9NeX4tP7vAy0JuLg",
    "object": "chat.completion",
    "created": 1731456520,
    "model": "gpt-4o-2024-08-06",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hi!", "refusal": None},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
}


async def test_gpt_names_resolve_to_adks_openai_llm_with_its_output_limit() -> None:
    assert LLMRegistry.resolve("gpt-4o") is OpenAILlm
    assert LLMRegistry.resolve("o3-mini") is OpenAILlm
    sent, client = answering(200, CHAT_COMPLETION)
    llm = OpenAILlm(api_key=KEY, http_client=client)

    [response] = await collect(llm, LlmRequest(contents=[user("Hi")]))

    assert str(sent[0].url) == "https://api.openai.com/v1/chat/completions"
    body = json.loads(sent[0].content)
    assert body["model"] == "gpt-4o" and body["max_tokens"] == 4096
    assert texts(response) == [("Hi!", False)]


async def test_a_reasoning_model_gets_max_completion_tokens_and_no_temperature() -> None:
    sent, client = answering(200, CHAT_COMPLETION)
    llm = OpenAILlm(model="o3-mini", api_key=KEY, http_client=client)
    config = OpenAIGenerateContentConfig(temperature=0.2, max_output_tokens=300, effort="low")

    await collect(llm, LlmRequest(contents=[user("Hi")], config=config))

    body = json.loads(sent[0].content)
    assert body["max_completion_tokens"] == 300 and "max_tokens" not in body
    assert "temperature" not in body and body["reasoning_effort"] == "low"


def test_the_labs_path_serves_the_same_classes() -> None:
    import cairn.labs.openai as labs

    assert labs.OpenAIResponsesLlm is OpenAIResponsesLlm
    assert labs.AzureOpenAIResponsesLlm is AzureOpenAIResponsesLlm
    assert labs.OpenAILlm is OpenAILlm
    assert "api_key" not in OpenAIResponsesLlm(api_key=KEY).model_dump()


async def test_a_client_of_ones_own_is_used_and_cairn_makes_the_retries() -> None:
    recorded = replay("rate_limited_then_text")
    client = openai.AsyncOpenAI(
        api_key=KEY, base_url="https://gateway.example/v1", http_client=recorded.client()
    )
    llm = OpenAIResponsesLlm(model="gpt-5-mini", client=client)
    sleeps = Sleeps()
    llm._sleep = sleeps

    [response] = await collect(llm, LlmRequest(contents=[user("Say hi.")]))

    recorded.assert_requests_as_recorded()  # two requests: the SDK itself retried nothing
    assert str(recorded.requests[0].url) == "https://gateway.example/v1/responses"
    assert sleeps.waits == [3.0] and texts(response) == [("Hi!", False)]
