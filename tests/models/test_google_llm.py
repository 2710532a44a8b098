"""The Gemini adapter against recorded Gemini API exchanges (no network).

Each file in ``recordings/gemini/`` holds the HTTP exchanges of one scenario, in
the API's own JSON: a generateContent body, or the events of a
streamGenerateContent SSE stream, which ``Replay`` sends as the API does
(``data: {...}`` lines ending in CRLF CRLF, in small byte chunks).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from google.genai import types

from cairn.models import LlmRequest, LlmResponse
from cairn.models.errors import MissingApiKeyError, ModelCallError
from cairn.models.google_llm import Gemini
from cairn.models.registry import LLMRegistry

RECORDINGS = Path(__file__).parent / "recordings" / "gemini"
API_KEY = "test-key-0123456789"


class Replay:
    """Serves a recording's exchanges in order and keeps every request it was sent."""

    def __init__(self, name: str) -> None:
        recording = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))
        self.exchanges: list[dict[str, Any]] = recording["exchanges"]
        self.requests: list[httpx2.Request] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        assert len(self.requests) < len(self.exchanges), f"unexpected request {request.url}"
        expected = self.exchanges[len(self.requests)]["request"]
        self.requests.append(request)
        assert request.method == expected["method"]
        assert request.url.host == expected.get("host", "generativelanguage.googleapis.com")
        assert request.url.path == expected["path"]
        assert request.url.query.decode() == expected.get("query", "")
        response = self.exchanges[len(self.requests) - 1]["response"]
        if "sse" in response:
            wire = "".join(
                f"data: {json.dumps(event, separators=(',', ': '), ensure_ascii=False)}\r\n\r\n"
                for event in response["sse"]
            ).encode()
            pieces = [wire[i : i + 64] for i in range(0, len(wire), 64)]
            return httpx2.Response(
                response["status"], headers=response["headers"], stream=_Chunks(pieces)
            )
        return httpx2.Response(
            response["status"], headers=response["headers"], content=json.dumps(response["body"])
        )

    def sent(self, index: int = -1) -> dict[str, Any]:
        """The JSON body of a request the adapter sent."""
        body: dict[str, Any] = json.loads(self.requests[index].content)
        return body


class _Chunks(httpx2.AsyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __aiter__(self) -> Any:
        for piece in self.pieces:
            yield piece


class Sleeps:
    """Stands in for asyncio.sleep: records each wait instead of waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_ENTERPRISE",
        "GOOGLE_GENAI_API_VERSION",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", API_KEY)


def gemini(replay: Replay, sleeps: Sleeps | None = None, **fields: Any) -> Gemini:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(replay.handle))
    return Gemini(model="gemini-2.5-flash", http_client=client, sleep=sleeps or Sleeps(), **fields)


def ask(text: str, **config: Any) -> LlmRequest:
    return LlmRequest(
        contents=[types.Content(role="user", parts=[types.Part(text=text)])],
        config=types.GenerateContentConfig(**config),
    )


async def responses(llm: Gemini, request: LlmRequest, stream: bool = False) -> list[LlmResponse]:
    return [r async for r in llm.generate_content_async(request, stream=stream)]


WEATHER = types.FunctionDeclaration(
    name="get_weather",
    description="The current weather in a city.",
    parameters_json_schema={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city's name."}},
        "required": ["city"],
    },
)


# -- replies ------------------------------------------------------------------------------------
async def test_plain_text_reply() -> None:
    replay = Replay("text")
    [reply] = await responses(gemini(replay), ask("What is the capital of France?"))

    assert reply.content is not None and reply.content.role == "model"
    assert [p.text for p in reply.content.parts or []] == ["Paris is the capital of France."]
    assert reply.finish_reason == types.FinishReason.STOP
    assert reply.usage_metadata is not None
    assert reply.usage_metadata.prompt_token_count == 9
    assert reply.usage_metadata.candidates_token_count == 7
    assert reply.model_version == "gemini-2.5-flash"
    assert not reply.partial and reply.turn_complete and reply.error_code is None

    request = replay.requests[0]
    assert request.headers["x-goog-api-key"] == API_KEY
    assert replay.sent() == {
        "contents": [{"role": "user", "parts": [{"text": "What is the capital of France?"}]}],
        "generationConfig": {},
    }


async def test_function_call_round_trip_sends_instruction_tools_and_response_ids() -> None:
    replay = Replay("function_call")
    llm = gemini(replay)
    request = ask(
        "What's the weather in Paris?",
        system_instruction="You answer weather questions. Use the tools.",
        tools=[types.Tool(function_declarations=[WEATHER])],
        temperature=0.2,
        max_output_tokens=512,
    )

    [call_reply] = await responses(llm, request)
    assert call_reply.content is not None
    [call_part] = call_reply.content.parts or []
    assert call_part.function_call is not None
    assert call_part.function_call.name == "get_weather"
    assert call_part.function_call.args == {"city": "Paris"}
    assert call_part.thought_signature is not None  # kept, to be sent back with the call

    first = replay.sent(0)
    assert first["systemInstruction"] == {
        "parts": [{"text": "You answer weather questions. Use the tools."}],
        "role": "user",
    }
    [declaration] = first["tools"][0]["functionDeclarations"]
    assert declaration["name"] == "get_weather"
    assert declaration["description"] == "The current weather in a city."
    # google-genai sends the declaration's own field names; the API reads both spellings.
    schema = declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))
    assert schema == WEATHER.parameters_json_schema
    assert "parameters" not in declaration
    assert first["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 512}

    # The agent gives the call an id, runs the tool and sends the result back under that id.
    call_part.function_call.id = "cairn-7f0c"
    request.contents += [
        call_reply.content,
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="cairn-7f0c",
                        name="get_weather",
                        response={"temperature_c": 21, "sky": "sunny"},
                    )
                )
            ],
        ),
    ]
    [answer] = await responses(llm, request)
    assert answer.content is not None
    assert [p.text for p in answer.content.parts or []] == ["It is 21 °C and sunny in Paris."]

    second = replay.sent(1)
    model_turn, tool_turn = second["contents"][1:]
    [sent_call] = model_turn["parts"]
    assert model_turn["role"] == "model"
    assert sent_call["functionCall"] == {
        "id": "cairn-7f0c",
        "name": "get_weather",
        "args": {"city": "Paris"},
    }
    # The signature goes back byte for byte (google-genai writes it in URL-safe base64).
    recorded = replay.exchanges[0]["response"]["body"]["candidates"][0]["content"]["parts"][0]
    assert base64.urlsafe_b64decode(sent_call["thoughtSignature"]) == base64.b64decode(
        recorded["thoughtSignature"]
    )
    assert tool_turn == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "cairn-7f0c",
                    "name": "get_weather",
                    "response": {"temperature_c": 21, "sky": "sunny"},
                }
            }
        ],
    }
    assert second["systemInstruction"] == first["systemInstruction"]


async def test_a_blocked_prompt_is_an_error_response_named_by_its_reason() -> None:
    [reply] = await responses(gemini(Replay("blocked_prompt")), ask("..."))
    assert reply.error_code == "PROHIBITED_CONTENT"
    assert reply.error_message and reply.content is None
    assert reply.usage_metadata is not None and reply.usage_metadata.prompt_token_count == 12


async def test_an_empty_reply_that_finished_normally_is_not_an_error() -> None:
    [reply] = await responses(gemini(Replay("empty_reply")), ask("Thanks!"))
    assert reply.error_code is None and reply.error_message is None
    assert reply.finish_reason == types.FinishReason.STOP
    assert reply.content is None or not reply.content.parts


# -- streaming ----------------------------------------------------------------------------------
async def test_streaming_text_yields_partials_then_one_merged_reply() -> None:
    replay = Replay("stream_text")
    *partials, final = await responses(gemini(replay), ask("Capital of France?"), stream=True)

    assert [p.partial for p in partials] == [True, True, True]
    shown = [part.text for p in partials for part in (p.content.parts if p.content else None) or []]
    assert shown == ["Paris is", " the capital", " of France."]
    assert not final.partial and final.turn_complete
    assert final.content is not None
    assert [p.text for p in final.content.parts or []] == ["Paris is the capital of France."]
    assert final.finish_reason == types.FinishReason.STOP
    assert final.usage_metadata is not None
    assert final.usage_metadata.candidates_token_count == 7  # the last chunk's usage
    assert final.usage_metadata.total_token_count == 37
    assert final.model_version == "gemini-2.5-flash"


async def test_streaming_function_call_keeps_the_call_and_merges_text_and_thoughts() -> None:
    replay = Replay("stream_function_call")
    request = ask("Weather in Paris?", tools=[types.Tool(function_declarations=[WEATHER])])
    *partials, final = await responses(gemini(replay), request, stream=True)

    assert all(p.partial for p in partials)
    shown = [(part.text, bool(part.thought)) for p in partials for part in p.content.parts or []]
    assert shown == [
        ("**Checking the weather**\n\nThe user wants ", True),
        ("the current weather in Paris.", True),
        ("Let me look that up.", False),
    ]  # no partial for the chunk holding only the call

    assert final.turn_complete and not final.partial
    assert final.content is not None
    thought, text, call = final.content.parts or []
    assert thought.thought and thought.text == (
        "**Checking the weather**\n\nThe user wants the current weather in Paris."
    )
    assert text.text == "Let me look that up." and not text.thought
    assert call.function_call is not None and call.function_call.name == "get_weather"
    assert call.function_call.args == {"city": "Paris"}
    signature = replay.exchanges[0]["response"]["sse"][-1]["candidates"][0]["content"]["parts"][0]
    assert call.thought_signature == base64.b64decode(signature["thoughtSignature"])
    assert final.finish_reason == types.FinishReason.STOP
    assert final.usage_metadata is not None
    assert final.usage_metadata.candidates_token_count == 22

    [declaration] = replay.sent()["tools"][0]["functionDeclarations"]
    assert declaration["name"] == "get_weather"


async def test_an_error_in_the_middle_of_a_stream_raises_after_the_partials_without_retry() -> None:
    replay = Replay("stream_error_midway")
    sleeps = Sleeps()
    seen: list[LlmResponse] = []
    with pytest.raises(ModelCallError) as raised:
        async for response in gemini(replay, sleeps).generate_content_async(
            ask("Capital of France?"), stream=True
        ):
            seen.append(response)

    assert [r.partial for r in seen] == [True]
    assert raised.value.status_code == 500 and raised.value.retryable
    assert "An internal error has occurred" in str(raised.value)
    assert len(replay.requests) == 1 and sleeps.waits == []


# -- retries ------------------------------------------------------------------------------------
async def test_429_with_retry_after_waits_that_long_then_succeeds() -> None:
    replay = Replay("rate_limited_retry_after")
    sleeps = Sleeps()
    [reply] = await responses(gemini(replay, sleeps), ask("Capital of France?"))

    assert reply.content is not None and reply.content.parts
    assert reply.content.parts[0].text == "Paris is the capital of France."
    assert len(replay.requests) == 2
    assert sleeps.waits == [7.0]


async def test_429_with_retry_info_waits_the_retry_delay_then_succeeds() -> None:
    replay = Replay("rate_limited_retry_info")
    sleeps = Sleeps()
    [reply] = await responses(gemini(replay, sleeps), ask("Capital of France?"))

    assert reply.error_code is None and reply.content is not None
    assert len(replay.requests) == 2
    assert sleeps.waits == [12.0]


async def test_429_on_opening_a_stream_is_retried_too() -> None:
    replay = Replay("stream_rate_limited_then_ok")
    sleeps = Sleeps()
    *_, final = await responses(gemini(replay, sleeps), ask("Capital of France?"), stream=True)

    assert final.content is not None and final.content.parts
    assert final.content.parts[0].text == "Paris is the capital of France."
    assert len(replay.requests) == 2 and sleeps.waits == [12.0]


async def test_503_is_retried_with_backoff_then_succeeds() -> None:
    replay = Replay("overloaded_then_ok")
    sleeps = Sleeps()
    [reply] = await responses(gemini(replay, sleeps), ask("Capital of France?"))

    assert reply.content is not None and reply.error_code is None
    assert len(replay.requests) == 2
    [wait] = sleeps.waits
    assert 0.5 <= wait <= 1.0  # the first backoff step, with jitter


async def test_503_on_every_attempt_raises_after_max_retries_with_growing_waits() -> None:
    replay = Replay("overloaded")
    sleeps = Sleeps()
    with pytest.raises(ModelCallError) as raised:
        await responses(gemini(replay, sleeps, max_retries=3), ask("Capital of France?"))

    error = raised.value
    assert len(replay.requests) == 4 and error.attempts == 4
    assert error.status_code == 503 and error.retryable
    assert len(sleeps.waits) == 3
    for wait, step in zip(sleeps.waits, [1.0, 2.0, 4.0], strict=True):
        assert step / 2 <= wait <= step  # doubling backoff, with jitter
    assert "after 4 attempts" in str(error) and "The model is overloaded" in str(error)


async def test_a_server_wait_longer_than_max_retry_wait_fails_at_once() -> None:
    replay = Replay("quota_exhausted_for_an_hour")
    sleeps = Sleeps()
    with pytest.raises(ModelCallError) as raised:
        await responses(gemini(replay, sleeps), ask("Capital of France?"))

    assert sleeps.waits == [] and len(replay.requests) == 1
    assert raised.value.status_code == 429 and raised.value.retryable
    assert "3600s" in str(raised.value) and "max_retry_wait" in str(raised.value)


# -- errors -------------------------------------------------------------------------------------
async def test_400_raises_model_call_error_with_the_provider_message() -> None:
    replay = Replay("bad_request")
    sleeps = Sleeps()
    request = ask("Capital of France, as CSV", response_mime_type="text/csv")
    with pytest.raises(ModelCallError) as raised:
        await responses(gemini(replay, sleeps), request)

    error = raised.value
    assert error.provider == "gemini" and error.model == "gemini-2.5-flash"
    assert error.status_code == 400 and not error.retryable and error.attempts == 1
    message = str(error)
    assert "gemini" in message and "'gemini-2.5-flash'" in message and "HTTP 400" in message
    assert "response_mime_type: allowed mimetypes are `text/plain`" in message
    assert "INVALID_ARGUMENT" in message
    assert len(replay.requests) == 1 and sleeps.waits == []
    assert replay.sent()["generationConfig"] == {"responseMimeType": "text/csv"}


async def test_a_request_without_contents_fails_before_sending() -> None:
    replay = Replay("text")
    with pytest.raises(ModelCallError) as raised:
        await responses(gemini(replay), LlmRequest())
    assert "no contents" in str(raised.value) and not raised.value.retryable
    assert replay.requests == []


async def test_an_invalid_key_says_which_key_to_check_and_never_shows_it() -> None:
    replay = Replay("api_key_invalid")
    with pytest.raises(ModelCallError) as raised:
        await responses(gemini(replay), ask("Capital of France?"))

    message = str(raised.value)
    assert "API key not valid" in message and "GOOGLE_API_KEY" in message
    assert API_KEY not in message and API_KEY not in repr(raised.value)


async def test_a_timeout_is_retried_then_raises_model_call_error() -> None:
    attempts: list[httpx2.Request] = []

    def too_slow(request: httpx2.Request) -> httpx2.Response:
        attempts.append(request)
        raise httpx2.ReadTimeout("timed out", request=request)

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(too_slow))
    sleeps = Sleeps()
    llm = Gemini(
        model="gemini-2.5-flash", http_client=client, timeout=5, max_retries=1, sleep=sleeps
    )
    with pytest.raises(ModelCallError) as raised:
        await responses(llm, ask("Capital of France?"))

    assert len(attempts) == 2 and len(sleeps.waits) == 1
    assert raised.value.status_code is None and raised.value.retryable
    assert raised.value.attempts == 2 and "timeout=5s" in str(raised.value)


async def test_a_connection_failure_raises_model_call_error() -> None:
    def unreachable(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("[Errno 111] Connection refused", request=request)

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(unreachable))
    llm = Gemini(model="gemini-2.5-flash", http_client=client, max_retries=0, sleep=Sleeps())
    with pytest.raises(ModelCallError) as raised:
        await responses(llm, ask("Capital of France?"))
    assert raised.value.status_code is None and "Connection refused" in str(raised.value)


async def test_a_missing_key_names_google_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY")
    replay = Replay("text")
    with pytest.raises(MissingApiKeyError) as raised:
        await responses(gemini(replay), ask("Capital of France?"))

    assert "GOOGLE_API_KEY" in str(raised.value) and "GEMINI_API_KEY" in str(raised.value)
    assert replay.requests == []


# -- configuration ------------------------------------------------------------------------------
async def test_gemini_api_key_is_used_when_google_api_key_is_unset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key-42")
    replay = Replay("text")
    await responses(gemini(replay), ask("Capital of France?"))
    assert replay.requests[0].headers["x-goog-api-key"] == "gemini-key-42"


async def test_an_explicit_api_key_wins_over_the_environment() -> None:
    replay = Replay("text")
    await responses(gemini(replay, api_key="explicit-key"), ask("Capital of France?"))
    assert replay.requests[0].headers["x-goog-api-key"] == "explicit-key"


def test_vertex_ai_is_chosen_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    # Calling it would need Google Cloud credentials; check the client it would call with.
    client, provider, api_key = Gemini(model="gemini-2.5-flash")._client()
    assert provider == "vertexai" and client.vertexai and api_key is None


async def test_vertex_ai_express_mode_sends_the_given_key_to_aiplatform(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    replay = Replay("vertex_express_text")
    [reply] = await responses(gemini(replay, api_key="vertex-key"), ask("Capital of France?"))

    assert reply.content is not None and reply.content.parts
    assert reply.content.parts[0].text == "Paris is the capital of France."
    assert replay.requests[0].headers["x-goog-api-key"] == "vertex-key"


def test_the_key_is_never_serialized_or_shown() -> None:
    llm = Gemini(model="gemini-2.5-flash", api_key="secret-key-1")
    assert "secret-key-1" not in repr(llm)
    assert "secret-key-1" not in llm.model_dump_json()
    assert llm.model_dump() == {
        "model": "gemini-2.5-flash",
        "timeout": 60.0,
        "max_retries": 3,
        "max_retry_wait": 60.0,
    }


def test_the_registry_serves_gemini_models_with_this_class() -> None:
    assert LLMRegistry.resolve("gemini-2.5-flash") is Gemini
    assert isinstance(LLMRegistry.new_llm("gemini-2.0-flash-001"), Gemini)
