"""AnthropicLlm against recorded Messages API exchanges (served by a mock transport, no network)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

pytest.importorskip("anthropic")
import httpx2  # the HTTP library of the installed anthropic SDK

from cairn.models import LLMRegistry, LlmRequest, LlmResponse
from cairn.models.anthropic_llm import CONTINUATION_PLACEHOLDER, AnthropicLlm
from cairn.models.errors import MissingApiKeyError, ModelCallError

RECORDINGS = Path(__file__).parent / "recordings" / "anthropic"
KEY = "sk-ant-api03-test-key-never-shown"


@dataclasses.dataclass
class Reply:
    """One recorded response: its status, the file holding its body, extra headers."""

    status: int
    recording: str
    headers: dict[str, str] = dataclasses.field(default_factory=dict)


class _Chunks(httpx2.AsyncByteStream):
    """The body in small pieces, as a network delivers it (SSE lines split anywhere)."""

    def __init__(self, body: bytes, size: int = 37) -> None:
        self.body, self.size = body, size

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.body), self.size):
            yield self.body[start : start + self.size]


class RecordedApi:
    """Serves the replies in order and keeps every request it was sent."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[httpx2.Request] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        assert len(self.requests) <= len(self.replies), "more calls than recorded replies"
        reply = self.replies[len(self.requests) - 1]
        body = (RECORDINGS / reply.recording).read_bytes()
        streamed = reply.recording.endswith(".sse")
        headers = {
            "content-type": "text/event-stream" if streamed else "application/json",
            "request-id": f"req_test_{len(self.requests)}",
            **reply.headers,
        }
        return httpx2.Response(reply.status, headers=headers, stream=_Chunks(body))

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(request.content) for request in self.requests]


class Waits:
    """An injected sleep: records each wait and returns at once."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


def make_llm(
    api: RecordedApi,
    waits: Waits | None = None,
    model: str = "anthropic/claude-sonnet-4-6",
    **fields: Any,
) -> AnthropicLlm:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(api.handle))
    fields.setdefault("api_key", KEY)
    return AnthropicLlm(model=model, http_client=client, sleep=waits or Waits(), **fields)


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def ask(text: str = "What is Hangzhou?") -> LlmRequest:
    return LlmRequest(contents=[user(text)])


async def collect(llm: AnthropicLlm, request: LlmRequest, stream: bool) -> list[LlmResponse]:
    return [response async for response in llm.generate_content_async(request, stream=stream)]


# ---------------------------------------------------------------- plain text


async def test_plain_text_reply_becomes_one_model_content_with_usage() -> None:
    api = RecordedApi(Reply(200, "text.json"))
    [response] = await collect(make_llm(api), ask(), stream=False)

    assert response.content == types.Content(
        role="model",
        parts=[types.Part(text="Hangzhou is the capital of Zhejiang province, in eastern China.")],
    )
    assert response.partial is None
    assert response.turn_complete is True
    assert response.finish_reason == types.FinishReason.STOP
    assert response.model_version == "claude-sonnet-4-6"
    usage = response.usage_metadata
    assert usage is not None
    assert (usage.prompt_token_count, usage.candidates_token_count) == (21, 17)
    assert usage.total_token_count == 38

    [request] = api.requests
    assert request.method == "POST" and request.url.path == "/v1/messages"
    auth = request.headers.get("x-api-key") or request.headers.get("authorization", "")
    assert KEY in auth
    body = api.bodies[0]
    assert body["model"] == "claude-sonnet-4-6"  # the part after 'anthropic/'
    assert body["max_tokens"] == 4096  # the field's default: the request sets none
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What is Hangzhou?"}]}
    ]
    assert "system" not in body and "tools" not in body and "stream" not in body


async def test_claude_model_names_are_sent_whole_and_resolve_through_the_registry() -> None:
    api = RecordedApi(Reply(200, "text.json"))
    await collect(make_llm(api, model="claude-haiku-4-5"), ask(), stream=False)
    assert api.bodies[0]["model"] == "claude-haiku-4-5"
    assert LLMRegistry.resolve("anthropic/claude-sonnet-4-6") is AnthropicLlm
    assert LLMRegistry.resolve("claude-opus-4-1") is AnthropicLlm


# ---------------------------------------------------------------- tool use


WEATHER_SCHEMA = types.Schema(
    type=types.Type.OBJECT,
    properties={
        "city": types.Schema(type=types.Type.STRING, description="City name"),
        "unit": types.Schema(type=types.Type.STRING, enum=["celsius", "fahrenheit"], nullable=True),
        "days": types.Schema(type=types.Type.ARRAY, items=types.Schema(type=types.Type.INTEGER)),
    },
    required=["city"],
    property_ordering=["city", "unit", "days"],
)


def weather_request() -> LlmRequest:
    """A conversation with a tool round trip, written the way cairn's agents record it."""
    call_a = types.FunctionCall(id="toolu_a", name="get_weather", args={"city": "Hangzhou"})
    call_b = types.FunctionCall(id="toolu_b", name="get_time", args={})
    answer_a = types.FunctionResponse(id="toolu_a", name="get_weather", response={"temp_c": 21})
    answer_b = types.FunctionResponse(id="toolu_b", name="get_time", response={"time": "09:30"})
    request = LlmRequest(
        model="anthropic/claude-sonnet-4-6",
        contents=[
            user("Weather and time in Hangzhou?"),
            types.Content(role="model", parts=[types.Part(text="Checking both.")]),
            types.Content(
                role="model",
                parts=[types.Part(function_call=call_a), types.Part(function_call=call_b)],
            ),
            types.Content(role="user", parts=[types.Part(function_response=answer_a)]),
            user("And Beijing, in Fahrenheit."),
            types.Content(role="user", parts=[types.Part(function_response=answer_b)]),
        ],
        config=types.GenerateContentConfig(
            system_instruction="You are a concise weather assistant.",
            max_output_tokens=1024,
            temperature=0.2,
            stop_sequences=["###"],
            tools=[
                types.Tool(
                    function_declarations=[
                        types.FunctionDeclaration(
                            name="get_weather",
                            description="Current weather for a city.",
                            parameters=WEATHER_SCHEMA,
                        ),
                        types.FunctionDeclaration(
                            name="get_time",
                            description="Local time.",
                            parameters_json_schema={
                                "type": "object",
                                "properties": {"tz": {"type": "string"}},
                            },
                        ),
                    ]
                )
            ],
        ),
    )
    return request


async def test_tool_use_request_carries_system_tools_and_merged_alternating_turns() -> None:
    api = RecordedApi(Reply(200, "tool_use.json"))
    await collect(make_llm(api), weather_request(), stream=False)

    body = api.bodies[0]
    assert body["system"] == "You are a concise weather assistant."
    assert body["max_tokens"] == 1024
    assert body["temperature"] == 0.2
    assert body["stop_sequences"] == ["###"]
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "unit": {"type": ["string", "null"], "enum": ["celsius", "fahrenheit"]},
                    "days": {"type": "array", "items": {"type": "integer"}},
                },
                "required": ["city"],
            },
        },
        {
            "name": "get_time",
            "description": "Local time.",
            "input_schema": {"type": "object", "properties": {"tz": {"type": "string"}}},
        },
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather and time in Hangzhou?"}]},
        {  # two model contents in a row: one assistant turn
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking both."},
                {
                    "type": "tool_use",
                    "id": "toolu_a",
                    "name": "get_weather",
                    "input": {"city": "Hangzhou"},
                },
                {"type": "tool_use", "id": "toolu_b", "name": "get_time", "input": {}},
            ],
        },
        {  # three user contents in a row: one user turn, tool results first
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": '{"temp_c": 21}'},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": '{"time": "09:30"}'},
                {"type": "text", "text": "And Beijing, in Fahrenheit."},
            ],
        },
    ]


async def test_tool_use_reply_becomes_text_and_function_call_parts() -> None:
    api = RecordedApi(Reply(200, "tool_use.json"))
    [response] = await collect(make_llm(api), weather_request(), stream=False)

    assert response.content is not None
    assert response.content.role == "model"
    text, call = response.content.parts or []
    assert text.text == "I'll look up the current weather in Beijing as well."
    assert call.function_call == types.FunctionCall(
        id="toolu_01A09q90qw90lq917835lq9",
        name="get_weather",
        args={"city": "Beijing", "unit": "fahrenheit"},
    )
    assert response.finish_reason == types.FinishReason.STOP  # stop_reason 'tool_use'
    usage = response.usage_metadata
    assert usage is not None
    assert usage.prompt_token_count == 412 + 1800  # cache reads count as prompt tokens
    assert usage.candidates_token_count == 68
    assert usage.total_token_count == 412 + 1800 + 68
    assert usage.cached_content_token_count == 1800


async def test_a_conversation_starting_or_ending_with_the_model_gets_user_turns_around_it() -> None:
    api = RecordedApi(Reply(200, "text.json"))
    request = LlmRequest(
        contents=[
            types.Content(role="model", parts=[types.Part(text="Hello! How can I help?")]),
            user("Tell me about Hangzhou."),
            types.Content(role="model", parts=[types.Part(text="It is in Zhejiang.")]),
        ]
    )
    await collect(make_llm(api), request, stream=False)
    messages = api.bodies[0]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    placeholder = [{"type": "text", "text": CONTINUATION_PLACEHOLDER}]
    assert messages[0]["content"] == placeholder
    assert messages[-1]["content"] == placeholder


async def test_function_calling_mode_any_with_one_name_forces_that_tool() -> None:
    api = RecordedApi(Reply(200, "tool_use.json"))
    request = weather_request()
    request.config.tool_config = types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(
            mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=["get_weather"]
        )
    )
    await collect(make_llm(api), request, stream=False)
    assert api.bodies[0]["tool_choice"] == {"type": "tool", "name": "get_weather"}


async def test_images_are_sent_as_base64_blocks_and_other_media_is_refused() -> None:
    api = RecordedApi(Reply(200, "text.json"))
    png = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG"))
    request = LlmRequest(contents=[types.Content(role="user", parts=[png])])
    await collect(make_llm(api), request, stream=False)
    assert api.bodies[0]["messages"][0]["content"] == [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw=="},
        }
    ]
    wav = types.Part(inline_data=types.Blob(mime_type="audio/wav", data=b"RIFF"))
    with pytest.raises(ValueError, match="audio/wav"):
        await collect(
            make_llm(api),
            LlmRequest(contents=[types.Content(role="user", parts=[wav])]),
            stream=False,
        )


async def test_calls_without_ids_are_paired_with_their_responses_by_name() -> None:
    api = RecordedApi(Reply(200, "text.json"))
    request = LlmRequest(
        contents=[
            user("Weather?"),
            types.Content(
                role="model",
                parts=[types.Part(function_call=types.FunctionCall(name="get_weather", args={}))],
            ),
            types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            name="get_weather", response={"temp_c": 21}
                        )
                    )
                ],
            ),
        ]
    )
    await collect(make_llm(api), request, stream=False)
    tool_use = api.bodies[0]["messages"][1]["content"][0]
    tool_result = api.bodies[0]["messages"][2]["content"][0]
    assert tool_use["id"] == tool_result["tool_use_id"]


# ---------------------------------------------------------------- streaming


async def test_streaming_text_yields_each_delta_then_one_whole_reply() -> None:
    api = RecordedApi(Reply(200, "stream_text.sse"))
    responses = await collect(make_llm(api), ask(), stream=True)

    *chunks, final = responses
    assert [c.partial for c in chunks] == [True, True, True]
    assert [c.content.parts[0].text for c in chunks if c.content and c.content.parts] == [
        "Hangzhou is",
        " the capital of Zhejiang",
        " province, in eastern China.",
    ]
    assert not final.partial
    assert final.turn_complete is True
    assert final.content == types.Content(
        role="model",
        parts=[types.Part(text="Hangzhou is the capital of Zhejiang province, in eastern China.")],
    )
    assert final.finish_reason == types.FinishReason.STOP
    assert final.model_version == "claude-sonnet-4-6"
    usage = final.usage_metadata
    assert usage is not None
    # input from message_start, output from message_delta (cumulative)
    assert (usage.prompt_token_count, usage.candidates_token_count) == (21, 17)
    assert api.bodies[0]["stream"] is True


async def test_streaming_tool_use_assembles_input_json_split_across_deltas() -> None:
    api = RecordedApi(Reply(200, "stream_tool_use.sse"))
    responses = await collect(make_llm(api), weather_request(), stream=True)

    *chunks, final = responses
    assert all(c.partial for c in chunks)
    assert "".join(
        p.text or "" for c in chunks if c.content and c.content.parts for p in c.content.parts
    ) == ("I'll check the weather in both cities.")
    assert final.turn_complete is True and not final.partial
    assert final.content is not None
    text, first, second = final.content.parts or []
    assert text.text == "I'll check the weather in both cities."
    assert first.function_call == types.FunctionCall(
        id="toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        name="get_weather",
        args={"city": "Hangzhou", "unit": "celsius"},
    )
    assert second.function_call == types.FunctionCall(
        id="toolu_01VX3FBP4ZkS3GhBM5dPhm1E", name="get_weather", args={"city": "Beijing"}
    )
    assert final.finish_reason == types.FinishReason.STOP
    assert final.usage_metadata is not None
    assert final.usage_metadata.candidates_token_count == 89


async def test_an_overloaded_stream_is_retried_when_nothing_was_yielded_yet() -> None:
    api = RecordedApi(
        Reply(200, "stream_overloaded_before_output.sse"), Reply(200, "stream_text.sse")
    )
    waits = Waits()
    responses = await collect(make_llm(api, waits), ask(), stream=True)
    assert len(api.requests) == 2
    assert len(waits.seconds) == 1
    assert responses[-1].turn_complete is True


async def test_a_stream_failing_after_partial_output_is_not_retried() -> None:
    api = RecordedApi(Reply(200, "stream_overloaded_after_output.sse"), Reply(200, "text.json"))
    seen: list[LlmResponse] = []
    with pytest.raises(ModelCallError) as caught:
        async for response in make_llm(api).generate_content_async(ask(), stream=True):
            seen.append(response)
    assert [r.partial for r in seen] == [True]
    assert len(api.requests) == 1
    assert caught.value.status_code == 529
    assert caught.value.retryable is True
    assert "overloaded_error: Overloaded" in str(caught.value)


# ---------------------------------------------------------------- retries and errors


async def test_429_waits_as_retry_after_asks_then_succeeds() -> None:
    api = RecordedApi(
        Reply(429, "error_rate_limit.json", {"retry-after": "7"}), Reply(200, "text.json")
    )
    waits = Waits()
    [response] = await collect(make_llm(api, waits), ask(), stream=False)
    assert len(api.requests) == 2
    assert waits.seconds == [7.0]
    assert response.content is not None


async def test_529_overloaded_backs_off_then_succeeds() -> None:
    api = RecordedApi(Reply(529, "error_overloaded.json"), Reply(200, "text.json"))
    waits = Waits()
    [response] = await collect(make_llm(api, waits), ask(), stream=False)
    assert len(api.requests) == 2
    [wait] = waits.seconds
    assert 0.75 <= wait <= 1.0  # first backoff step, with jitter
    assert response.finish_reason == types.FinishReason.STOP


async def test_retries_stop_after_max_retries_with_a_retryable_error() -> None:
    api = RecordedApi(*[Reply(529, "error_overloaded.json")] * 3)
    waits = Waits()
    with pytest.raises(ModelCallError) as caught:
        await collect(make_llm(api, waits, max_retries=2), ask(), stream=False)
    assert len(api.requests) == 3
    assert len(waits.seconds) == 2 and waits.seconds[0] < waits.seconds[1]
    error = caught.value
    assert (error.status_code, error.retryable, error.attempts) == (529, True, 3)
    assert "max_retries" in str(error)


async def test_streaming_call_rejected_with_429_is_retried_too() -> None:
    api = RecordedApi(
        Reply(429, "error_rate_limit.json", {"retry-after": "2"}), Reply(200, "stream_text.sse")
    )
    waits = Waits()
    responses = await collect(make_llm(api, waits), ask(), stream=True)
    assert waits.seconds == [2.0]
    assert responses[-1].turn_complete is True


async def test_400_is_a_model_call_error_with_the_provider_message_and_no_retry() -> None:
    api = RecordedApi(Reply(400, "error_invalid_request.json"), Reply(200, "text.json"))
    waits = Waits()
    with pytest.raises(ModelCallError) as caught:
        await collect(make_llm(api, waits, max_tokens=200000), ask(), stream=False)
    error = caught.value
    assert len(api.requests) == 1 and waits.seconds == []
    assert (error.provider, error.model, error.status_code) == (
        "anthropic",
        "anthropic/claude-sonnet-4-6",
        400,
    )
    assert error.retryable is False
    message = str(error)
    assert "HTTP 400" in message and "'anthropic/claude-sonnet-4-6'" in message
    assert "invalid_request_error: max_tokens: 200000 > 64000" in message
    assert "req_011CUJsB7pXr4n2Ck9bVwZ3d" in message
    assert KEY not in message


async def test_a_timeout_is_a_model_call_error() -> None:
    def time_out(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("timed out", request=request)

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(time_out))
    llm = AnthropicLlm(model="claude-sonnet-4-6", api_key=KEY, http_client=client, timeout=5)
    with pytest.raises(ModelCallError) as caught:
        await collect(llm, ask(), stream=False)
    assert caught.value.status_code is None
    assert "no response within 5s" in str(caught.value)
    assert "timeout=" in str(caught.value)


async def test_a_connection_failure_is_retried() -> None:
    api = RecordedApi(Reply(200, "text.json"))
    calls: list[httpx2.Request] = []

    def refuse_once(request: httpx2.Request) -> httpx2.Response:
        calls.append(request)
        if len(calls) == 1:
            raise httpx2.ConnectError("connection refused", request=request)
        return api.handle(request)

    waits = Waits()
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(refuse_once))
    llm = AnthropicLlm(model="claude-sonnet-4-6", api_key=KEY, http_client=client, sleep=waits)
    [response] = await collect(llm, ask(), stream=False)
    assert len(calls) == 2 and len(waits.seconds) == 1
    assert response.content is not None


async def test_a_stream_that_stops_arriving_is_a_model_call_error() -> None:
    body = (RECORDINGS / "stream_text.sse").read_bytes()
    cut = body.index(b"event: content_block_stop")

    class Stalls(httpx2.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield body[:cut]
            raise httpx2.ReadTimeout("timed out")

    def stall(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=Stalls())

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(stall))
    llm = AnthropicLlm(model="claude-sonnet-4-6", api_key=KEY, http_client=client)
    seen: list[LlmResponse] = []
    with pytest.raises(ModelCallError) as caught:
        async for response in llm.generate_content_async(ask(), stream=True):
            seen.append(response)
    assert seen and all(r.partial for r in seen)
    assert caught.value.status_code is None


async def test_a_missing_key_names_the_environment_variable_and_api_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    api = RecordedApi(Reply(200, "text.json"))
    llm = make_llm(api, api_key=None)
    with pytest.raises(MissingApiKeyError) as caught:
        await collect(llm, ask(), stream=False)
    assert "ANTHROPIC_API_KEY" in str(caught.value)
    assert "api_key=" in str(caught.value)
    assert api.requests == []


async def test_the_key_comes_from_the_environment_and_never_shows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    api = RecordedApi(Reply(400, "error_invalid_request.json"))
    llm = make_llm(api, api_key=None)
    with pytest.raises(ModelCallError) as caught:
        await collect(llm, ask(), stream=False)
    request = api.requests[0]
    assert KEY in (request.headers.get("x-api-key") or request.headers.get("authorization", ""))
    assert KEY not in str(caught.value)
    explicit = make_llm(RecordedApi())
    assert KEY not in repr(explicit)
    assert "api_key" not in explicit.model_dump()


async def test_anthropic_generate_content_config_sends_effort_and_no_sampling() -> None:
    from cairn.models import AnthropicGenerateContentConfig

    api = RecordedApi(Reply(200, "text.json"), Reply(200, "text.json"))
    llm = make_llm(api)
    config = AnthropicGenerateContentConfig(effort="high", temperature=0.3)
    await collect(llm, LlmRequest(contents=[user("Hi")], config=config), stream=False)
    plain = types.GenerateContentConfig(temperature=0.3)
    await collect(llm, LlmRequest(contents=[user("Hi")], config=plain), stream=False)

    with_effort, without = api.bodies
    assert with_effort["output_config"] == {"effort": "high"}
    assert "temperature" not in with_effort
    assert "output_config" not in without and without["temperature"] == 0.3
