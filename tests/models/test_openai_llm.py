"""OpenAILlm against recorded chat-completions exchanges (OpenAI's wire format), no network.

Each file in recordings/openai/ holds the exchanges of one scenario: the request body
the adapter must send and the response (JSON body, or an SSE stream file) the server
gave. ``Replay`` serves them in order through ``httpx2.MockTransport``.
"""

from __future__ import annotations

import asyncio
import base64
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest
from google.genai import types

from cairn.errors import CairnError
from cairn.models import LLMRegistry, LlmRequest, LlmResponse
from cairn.models.errors import ContextWindowExceededError, MissingApiKeyError, ModelCallError
from cairn.models.openai_llm import OpenAILlm, _retry_delay
from cairn.models.retries import retry_after_seconds as _retry_after_seconds

RECORDINGS = Path(__file__).parent / "recordings" / "openai"
KEY = "sk-test-0123456789abcdef"


class Replay:
    """Serves one recording's exchanges in order; keeps every request it was sent."""

    def __init__(self, name: str, directory: Path = RECORDINGS) -> None:
        self.directory = directory
        self.exchanges: list[dict[str, Any]] = json.loads(
            (directory / f"{name}.json").read_text(encoding="utf-8")
        )["exchanges"]
        self.requests: list[httpx2.Request] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        if len(self.requests) >= len(self.exchanges):
            raise AssertionError(f"unexpected request #{len(self.requests) + 1}: {request.url}")
        self.requests.append(request)
        response = self.exchanges[len(self.requests) - 1]["response"]
        if "sse" in response:
            content = (self.directory / response["sse"]).read_bytes()
        else:
            content = json.dumps(response["body"]).encode()
        return httpx2.Response(response["status"], headers=response["headers"], content=content)

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handle))

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(request.content) for request in self.requests]

    def assert_requests_as_recorded(self) -> None:
        assert len(self.requests) == len(self.exchanges)
        for sent, exchange in zip(self.bodies, self.exchanges, strict=True):
            if "request" in exchange:
                assert sent == exchange["request"]


class Sleeps:
    """Stands in for asyncio.sleep: records each wait and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def make_llm(replay: Replay, **fields: Any) -> tuple[OpenAILlm, Sleeps]:
    fields.setdefault("api_key", KEY)
    llm = OpenAILlm(model="openai/gpt-4o-mini", http_client=replay.client(), **fields)
    sleeps = Sleeps()
    llm._sleep = sleeps
    return llm, sleeps


async def collect(llm: OpenAILlm, request: LlmRequest, stream: bool = False) -> list[LlmResponse]:
    return [response async for response in llm.generate_content_async(request, stream=stream)]


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


@pytest.fixture(autouse=True)
def no_openai_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


# --- plain text ----------------------------------------------------------------------------


async def test_plain_text_answer_with_settings_and_system_instruction() -> None:
    replay = Replay("text")
    llm, _ = make_llm(replay)
    request = LlmRequest(
        contents=[user("Name the capital of France.")],
        config=types.GenerateContentConfig(
            system_instruction="You are a terse assistant.",
            temperature=0.2,
            max_output_tokens=64,
            top_p=0.9,
            stop_sequences=["END"],
        ),
    )

    responses = await collect(llm, request)

    replay.assert_requests_as_recorded()
    sent = replay.requests[0]
    assert sent.url == "https://api.openai.com/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert len(responses) == 1
    response = responses[0]
    assert response.partial is None
    assert response.content == types.Content(role="model", parts=[types.Part(text="Paris.")])
    assert response.finish_reason == types.FinishReason.STOP
    assert response.model_version == "gpt-4o-mini-2024-07-18"
    assert response.usage_metadata == types.GenerateContentResponseUsageMetadata(
        prompt_token_count=24,
        candidates_token_count=2,
        total_token_count=26,
        cached_content_token_count=0,
    )
    assert response.error_code is None


# --- tool calls ----------------------------------------------------------------------------

WEATHER = types.FunctionDeclaration(
    name="get_weather",
    description="The current weather in a city.",
    parameters_json_schema={  # as FunctionTool makes it from a pydantic model
        "additionalProperties": False,
        "properties": {
            "city": {"description": "The city name.", "title": "City", "type": "string"},
            "unit": {
                "default": "celsius",
                "enum": ["celsius", "fahrenheit"],
                "title": "Unit",
                "type": "string",
            },
        },
        "required": ["city"],
        "type": "object",
    },
)
TIME = types.FunctionDeclaration(
    name="get_time",
    description="The local time in a city.",
    parameters=types.Schema(
        type=types.Type.OBJECT,
        properties={
            "city": types.Schema(type=types.Type.STRING, description="The city name."),
            "formats": types.Schema(
                type=types.Type.ARRAY, items=types.Schema(type=types.Type.STRING), nullable=True
            ),
        },
        required=["city"],
    ),
)


async def test_tool_calls_and_their_results_round_trip_ids() -> None:
    replay = Replay("tool_call")
    llm, _ = make_llm(replay)
    question = user("Weather in Paris, and the time in Tokyo?")
    config = types.GenerateContentConfig(
        system_instruction="Answer with the tools.",
        tools=[types.Tool(function_declarations=[WEATHER, TIME])],
    )

    [calls] = await collect(llm, LlmRequest(contents=[question], config=config))

    assert calls.error_code is None
    assert calls.finish_reason == types.FinishReason.STOP
    assert calls.content is not None
    assert calls.content.role == "model"
    assert [part.function_call for part in calls.content.parts or []] == [
        types.FunctionCall(
            id="call_DdmO9pD3xa9XTPNJ32zg2hcA", name="get_weather", args={"city": "Paris"}
        ),
        types.FunctionCall(
            id="call_q8Vb1LmT0eRj4sXw9nKcYp2Z",
            name="get_time",
            args={"city": "Tokyo", "formats": ["24h"]},
        ),
    ]

    results = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id="call_DdmO9pD3xa9XTPNJ32zg2hcA",
                    name="get_weather",
                    response={"temperature": 18, "sky": "cloudy"},
                )
            ),
            types.Part(
                function_response=types.FunctionResponse(
                    id="call_q8Vb1LmT0eRj4sXw9nKcYp2Z", name="get_time", response={"time": "21:04"}
                )
            ),
        ],
    )
    [answer] = await collect(
        llm, LlmRequest(contents=[question, calls.content, results], config=config)
    )

    # The system message, both tool schemas (the genai Schema as JSON Schema), the
    # assistant's tool_calls and one tool message per result, ids unchanged.
    replay.assert_requests_as_recorded()
    assert answer.content == types.Content(
        role="model", parts=[types.Part(text="Paris: 18 °C and cloudy. Tokyo: 21:04.")]
    )
    assert answer.usage_metadata is not None
    assert answer.usage_metadata.cached_content_token_count == 128


async def test_a_call_without_id_gets_one_and_its_response_the_same_one() -> None:
    replay = Replay("text")  # only the request matters here
    llm, _ = make_llm(replay)
    call = types.FunctionCall(name="get_weather", args={"city": "Paris"})
    response = types.FunctionResponse(name="get_weather", response={"temperature": 18})
    request = LlmRequest(
        contents=[
            user("Weather?"),
            types.Content(role="model", parts=[types.Part(function_call=call)]),
            types.Content(role="user", parts=[types.Part(function_response=response)]),
        ]
    )

    await collect(llm, request)

    messages = replay.bodies[0]["messages"]
    [tool_call] = messages[1]["tool_calls"]
    assert tool_call["id"].startswith("call_")
    assert messages[2] == {
        "role": "tool",
        "tool_call_id": tool_call["id"],
        "content": '{"temperature": 18}',
    }


async def test_malformed_tool_arguments_are_an_error_response_naming_the_tool() -> None:
    replay = Replay("malformed_tool_call")
    llm, _ = make_llm(replay)

    [response] = await collect(llm, LlmRequest(contents=[user("Weather in Paris?")]))

    assert response.error_code == "MALFORMED_FUNCTION_CALL"
    assert response.finish_reason == types.FinishReason.MALFORMED_FUNCTION_CALL
    assert response.error_message is not None
    assert "'get_weather'" in response.error_message
    assert "call_x1y2z3" in response.error_message
    assert response.content is None


# --- streaming -----------------------------------------------------------------------------


async def test_streamed_text_yields_partials_then_one_aggregated_response() -> None:
    replay = Replay("stream_text")
    llm, _ = make_llm(replay)

    responses = await collect(
        llm, LlmRequest(contents=[user("Which river flows through Paris?")]), stream=True
    )

    replay.assert_requests_as_recorded()
    *partials, final = responses
    assert all(response.partial for response in partials)
    assert [p.content.parts[0].text for p in partials if p.content and p.content.parts] == [
        "The",
        " Seine",
        " flows",
        " through Paris.",
    ]
    assert final.partial is None
    assert final.turn_complete is True
    assert final.content == types.Content(
        role="model", parts=[types.Part(text="The Seine flows through Paris.")]
    )
    assert final.finish_reason == types.FinishReason.STOP
    assert final.usage_metadata is not None
    assert final.usage_metadata.total_token_count == 20
    assert final.usage_metadata.prompt_token_count == 14
    assert final.usage_metadata.candidates_token_count == 6


async def test_streamed_tool_calls_are_assembled_from_argument_deltas() -> None:
    replay = Replay("stream_tool_calls")
    llm, _ = make_llm(replay)
    weather = types.FunctionDeclaration(
        name="get_weather",
        description="The current weather in a city.",
        parameters_json_schema={
            "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["city"],
            "type": "object",
        },
    )
    request = LlmRequest(
        contents=[user("Weather in Paris and Tokyo?")],
        config=types.GenerateContentConfig(tools=[types.Tool(function_declarations=[weather])]),
    )

    responses = await collect(llm, request, stream=True)

    replay.assert_requests_as_recorded()
    [final] = responses  # no text, so no partial chunks
    assert final.turn_complete is True
    assert final.finish_reason == types.FinishReason.STOP
    assert final.content is not None
    assert [part.function_call for part in final.content.parts or []] == [
        types.FunctionCall(
            id="call_Hx3kP9sLm2QwE7rT1yUv5bNc", name="get_weather", args={"city": "Paris"}
        ),
        types.FunctionCall(
            id="call_Jm8nR2tVw6XyA4bC0dEf1gHi",
            name="get_weather",
            args={"city": "Tokyo", "unit": "celsius"},
        ),
    ]
    assert final.usage_metadata is not None
    assert final.usage_metadata.total_token_count == 135


async def test_an_error_event_inside_a_stream_raises_after_the_partials() -> None:
    replay = Replay("stream_error_event")
    llm, sleeps = make_llm(replay)
    seen: list[LlmResponse] = []

    with pytest.raises(ModelCallError) as raised:
        async for response in llm.generate_content_async(
            LlmRequest(contents=[user("Tell a story.")]), stream=True
        ):
            seen.append(response)

    assert [r.partial for r in seen] == [True]
    assert "The server had an error while processing your request" in str(raised.value)
    assert "not retried" in str(raised.value)
    assert len(replay.requests) == 1  # output was shown: never retried from the start
    assert sleeps.waits == []


# --- retries and errors --------------------------------------------------------------------


async def test_429_waits_as_long_as_retry_after_says_then_succeeds() -> None:
    replay = Replay("rate_limited_then_text")
    llm, sleeps = make_llm(replay)

    [response] = await collect(llm, LlmRequest(contents=[user("Say hi.")]))

    replay.assert_requests_as_recorded()
    assert len(replay.requests) == 2
    assert sleeps.waits == [7.0]
    assert response.content == types.Content(role="model", parts=[types.Part(text="Hi!")])


async def test_two_500s_are_retried_with_growing_backoff_then_succeed() -> None:
    replay = Replay("server_error_twice_then_text")
    llm, sleeps = make_llm(replay)

    [response] = await collect(llm, LlmRequest(contents=[user("Say hi.")]))

    assert len(replay.requests) == 3
    assert len(sleeps.waits) == 2
    first, second = sleeps.waits
    assert 0.375 <= first <= 0.5
    assert 0.75 <= second <= 1.0
    assert replay.bodies[0] == replay.bodies[1] == replay.bodies[2]
    assert response.content is not None


async def test_retries_exhausted_raise_a_retryable_model_call_error() -> None:
    replay = Replay("server_error_twice_then_text")
    llm, sleeps = make_llm(replay, max_retries=1)

    with pytest.raises(ModelCallError) as raised:
        await collect(llm, LlmRequest(contents=[user("Say hi.")]))

    error = raised.value
    assert len(replay.requests) == 2
    assert len(sleeps.waits) == 1
    assert error.status_code == 500
    assert error.retryable is True
    assert error.attempts == 2
    assert error.provider == "openai"
    assert "after 2 attempts" in str(error)
    assert "max_retries" in str(error)


async def test_400_raises_at_once_with_the_provider_message() -> None:
    replay = Replay("bad_request")
    llm, sleeps = make_llm(replay)

    with pytest.raises(ModelCallError) as raised:
        await collect(llm, LlmRequest(contents=[user("a very long conversation")]))

    error = raised.value
    assert isinstance(error, CairnError)
    assert len(replay.requests) == 1
    assert sleeps.waits == []
    assert error.status_code == 400
    assert error.retryable is False
    message = str(error)
    assert "openai" in message
    assert "'openai/gpt-4o-mini'" in message
    assert "HTTP 400" in message
    assert "maximum context length is 128000 tokens" in message
    assert KEY not in message
    assert KEY not in repr(llm)


async def test_an_echoed_api_key_never_reaches_the_error_message() -> None:
    replay = Replay("unauthorized_echoing_key")
    llm, _ = make_llm(replay)

    with pytest.raises(ModelCallError) as raised:
        await collect(llm, LlmRequest(contents=[user("Say hi.")]))

    assert raised.value.status_code == 401
    assert KEY not in str(raised.value)
    assert "Incorrect API key provided: <api key>" in str(raised.value)
    assert "OPENAI_API_KEY" in str(raised.value)


async def test_a_timeout_is_retried_then_raised_as_model_call_error() -> None:
    attempts: list[httpx2.Request] = []

    def time_out(request: httpx2.Request) -> httpx2.Response:
        attempts.append(request)
        raise httpx2.ReadTimeout("timed out", request=request)

    transport = httpx2.MockTransport(time_out)
    llm = OpenAILlm(
        model="openai/gpt-4o-mini",
        api_key=KEY,
        timeout=5.0,
        max_retries=2,
        http_client=httpx2.AsyncClient(transport=transport),
    )
    sleeps = Sleeps()
    llm._sleep = sleeps

    with pytest.raises(ModelCallError) as raised:
        await collect(llm, LlmRequest(contents=[user("Say hi.")]))

    assert len(attempts) == 3
    assert len(sleeps.waits) == 2
    assert raised.value.status_code is None
    assert raised.value.retryable is True
    assert "timeout=5.0s" in str(raised.value)


def test_retry_after_as_http_date_milliseconds_and_a_cap() -> None:
    now = datetime(2024, 11, 13, 0, 0, 0, tzinfo=UTC)
    assert _retry_after_seconds({"retry-after": "Wed, 13 Nov 2024 00:00:12 GMT"}, now) == 12.0
    assert _retry_after_seconds({"retry-after": "Tue, 12 Nov 2024 23:00:00 GMT"}, now) == 0.0
    assert _retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}, now) == 1.5
    assert _retry_after_seconds({"retry-after": "soon"}, now) is None
    assert _retry_after_seconds({}, now) is None
    assert _retry_delay({"retry-after": "3600"}, attempt=1) == 60.0


# --- credentials and servers ---------------------------------------------------------------


async def test_no_key_and_no_base_url_names_openai_api_key() -> None:
    llm = OpenAILlm(model="openai/gpt-4o-mini")

    with pytest.raises(MissingApiKeyError) as raised:
        await collect(llm, LlmRequest(contents=[user("Say hi.")]))

    message = str(raised.value)
    assert isinstance(raised.value, CairnError)
    assert "OPENAI_API_KEY" in message
    assert "api_key=" in message
    assert "OpenAILlm(model='openai/gpt-4o-mini', api_key=...)" in message


async def test_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    replay = Replay("text")
    llm = OpenAILlm(model="openai/gpt-4o-mini", http_client=replay.client())

    await collect(llm, LlmRequest(contents=[user("Name the capital of France.")]))

    assert replay.requests[0].headers["authorization"] == "Bearer sk-from-env"


async def test_a_local_server_from_openai_base_url_needs_no_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    replay = Replay("local_server")
    llm = OpenAILlm(model="openai/llama3.2", http_client=replay.client())

    [response] = await collect(llm, LlmRequest(contents=[user("Say hi.")]))

    replay.assert_requests_as_recorded()
    sent = replay.requests[0]
    assert sent.url == "http://localhost:11434/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer not-needed"
    assert response.content == types.Content(role="model", parts=[types.Part(text="Hi there!")])
    assert response.model_version == "llama3.2"


async def test_base_url_field_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://elsewhere:9999/v1")
    replay = Replay("local_server")
    llm = OpenAILlm(
        model="openai/llama3.2", base_url="http://127.0.0.1:8000/v1", http_client=replay.client()
    )

    await collect(llm, LlmRequest(contents=[user("Say hi.")]))

    assert replay.requests[0].url == "http://127.0.0.1:8000/v1/chat/completions"


# --- request details -----------------------------------------------------------------------


async def test_inline_images_become_data_urls_in_the_user_message() -> None:
    replay = Replay("text")
    llm, _ = make_llm(replay)
    png = b"\x89PNG\r\n\x1a\nfake"
    request = LlmRequest(
        contents=[
            types.Content(
                role="user",
                parts=[
                    types.Part(text="What is in this picture?"),
                    types.Part(inline_data=types.Blob(mime_type="image/png", data=png)),
                ],
            )
        ]
    )

    await collect(llm, request)

    [message] = replay.bodies[0]["messages"]
    assert message == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture?"},
            {
                "type": "image_url",
                "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()},
            },
        ],
    }


async def test_response_schema_becomes_a_json_schema_response_format() -> None:
    replay = Replay("text")
    llm, _ = make_llm(replay)
    schema = {
        "title": "Capital",
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    request = LlmRequest(
        contents=[user("Capital of France?")],
        config=types.GenerateContentConfig(response_json_schema=schema),
    )

    await collect(llm, request)

    assert replay.bodies[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Capital", "schema": schema},
    }


async def test_the_model_text_of_earlier_turns_is_sent_as_assistant_messages() -> None:
    replay = Replay("text")
    llm, _ = make_llm(replay)
    request = LlmRequest(
        contents=[
            user("Hi"),
            types.Content(role="model", parts=[types.Part(text="Hello"), types.Part(text="!")]),
            user("Capital of France?"),
        ]
    )

    await collect(llm, request)

    assert replay.bodies[0]["messages"] == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "Capital of France?"},
    ]


async def test_function_calling_mode_any_with_one_name_forces_that_tool() -> None:
    replay = Replay("text")
    llm, _ = make_llm(replay)
    request = LlmRequest(
        contents=[user("Weather in Paris?")],
        config=types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=[WEATHER])],
            tool_config=types.ToolConfig(
                function_calling_config=types.FunctionCallingConfig(
                    mode=types.FunctionCallingConfigMode.ANY,
                    allowed_function_names=["get_weather"],
                )
            ),
        ),
    )

    await collect(llm, request)

    assert replay.bodies[0]["tool_choice"] == {
        "type": "function",
        "function": {"name": "get_weather"},
    }


def test_the_registry_serves_openai_model_strings() -> None:
    assert LLMRegistry.resolve("openai/gpt-4o-mini") is OpenAILlm
    llm = LLMRegistry.new_llm("openai/gpt-4o-mini")
    assert isinstance(llm, OpenAILlm)
    assert "http_client" not in llm.model_dump()
    assert "api_key" not in OpenAILlm(model="openai/x", api_key=KEY).model_dump()


def test_one_sdk_client_per_event_loop() -> None:
    """Runner.run drives each call in a new loop; a pool from a closed loop would fail."""
    llm = OpenAILlm(model="openai/gpt-4o-mini", api_key=KEY)

    async def twice() -> tuple[object, object]:
        return llm._client(), llm._client()

    first, again = asyncio.run(twice())
    later, _ = asyncio.run(twice())
    assert first is again
    assert later is not first


# --- the retry window, the context window, long messages ----------------------------------


def always(status: int, body: dict[str, Any]) -> tuple[list[httpx2.Request], httpx2.AsyncClient]:
    """A transport that answers every request with ``status`` and ``body``."""
    sent: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(status, json=body)

    return sent, httpx2.AsyncClient(transport=httpx2.MockTransport(answer))


async def test_a_503_is_retried_until_the_waits_would_pass_the_retry_window() -> None:
    sent, client = always(503, {"error": {"message": "Loading model", "type": "unavailable"}})
    llm = OpenAILlm(
        model="openai/m", base_url="http://127.0.0.1:9/v1", http_client=client, retry_window=10.0
    )
    sleeps = Sleeps()
    llm._sleep = sleeps

    with pytest.raises(ModelCallError) as raised:
        await collect(llm, LlmRequest(contents=[user("Hi")]))

    # Backoff about 0.5, 1, 2, 4 (7.5 s at most) and the next, about 8 s, would pass 10 s.
    assert len(sleeps.waits) == 4 and sum(sleeps.waits) <= 10.0
    assert len(sent) == 5 and raised.value.attempts == 5
    assert raised.value.retryable is True and "retry_window=" in str(raised.value)


async def test_max_retries_zero_tries_once() -> None:
    sent, client = always(503, {"error": {"message": "Loading model"}})
    llm = OpenAILlm(
        model="openai/m", base_url="http://127.0.0.1:9/v1", http_client=client, max_retries=0
    )
    llm._sleep = Sleeps()

    with pytest.raises(ModelCallError):
        await collect(llm, LlmRequest(contents=[user("Hi")]))
    assert len(sent) == 1


async def test_a_prompt_over_the_configured_context_window_is_not_sent() -> None:
    sent, client = always(200, {})
    llm = OpenAILlm(
        model="openai/m", base_url="http://127.0.0.1:9/v1", http_client=client, context_window=100
    )

    with pytest.raises(ContextWindowExceededError) as raised:
        await collect(llm, LlmRequest(contents=[user("many words " * 100)]))

    assert sent == []
    error = raised.value
    assert error.context_window == 100 and error.prompt_tokens and error.prompt_tokens > 100
    assert error.retryable is False and error.before_sending
    assert "context_window=" in str(error) and "stays in the session's history" in str(error)


async def test_a_servers_long_message_is_capped() -> None:
    _, client = always(400, {"error": {"message": "bad field " * 1000, "type": "invalid"}})
    llm = OpenAILlm(model="openai/m", base_url="http://127.0.0.1:9/v1", http_client=client)

    with pytest.raises(ModelCallError) as raised:
        await collect(llm, LlmRequest(contents=[user("Hi")]))

    assert len(raised.value.provider_message) < 700
    assert "more characters]" in raised.value.provider_message
    assert len(str(raised.value)) < 1000
