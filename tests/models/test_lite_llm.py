"""LiteLlm through litellm against a real local HTTP server (its own uvicorn process).

The server (tests/support/scripted_chat_server.py) speaks OpenAI's chat completions wire
format and Ollama's, and answers with scripted replies, so that each test gets the exact
exchange it is about: a tool call and its follow-up, a 429 with Retry-After, a stream cut
off before or after its first text. Every call goes through litellm's own HTTP client.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from tests.support.scripted_chat_server import ScriptedChatServer, scripted_chat_server

from cairn import Agent, App, RunConfig, Runner
from cairn.agents import StreamingMode
from cairn.models import LlmCapabilities, LLMRegistry, LlmRequest, LlmResponse
from cairn.models.errors import ModelCallError, ModelPackageMissingError
from cairn.models.gemma3_ollama import Gemma3Ollama
from cairn.models.lite_llm import LiteLlm, LiteLLMClient
from cairn.models.openai_llm import OpenAILlm
from cairn.sessions.sqlite_session_service import SqliteSessionService

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-litellm-test-0123456789"
APP, USER = "weather", "ada"


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedChatServer]:
    with scripted_chat_server() as running:
        yield running


class Sleeps:
    """Stands in for asyncio.sleep between attempts: records each wait and returns."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def make_llm(server: ScriptedChatServer, **kwargs: Any) -> tuple[LiteLlm, Sleeps]:
    kwargs.setdefault("api_base", server.base_url)
    kwargs.setdefault("api_key", KEY)
    llm = LiteLlm(model=kwargs.pop("model", "openai/scripted"), **kwargs)
    sleeps = Sleeps()
    llm._sleep = sleeps
    return llm, sleeps


def completion(
    content: str | None = None,
    *,
    calls: list[dict[str, Any]] | None = None,
    finish: str = "stop",
    **message: Any,
) -> dict[str, Any]:
    said: dict[str, Any] = {"role": "assistant", "content": content, **message}
    if calls:
        said["tool_calls"] = calls
    usage = {"prompt_tokens": 11, "completion_tokens": 4, "total_tokens": 15}
    return {
        "completion": {
            "choices": [{"index": 0, "message": said, "finish_reason": finish}],
            "usage": usage,
        }
    }


def call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def text_stream(*pieces: str, finish: str | None = "stop", done: bool = True) -> dict[str, Any]:
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}}]}
        for piece in pieces
    ]
    if finish is not None:
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        chunks.append(
            {
                "choices": [],
                "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
            }
        )
    return {"chunks": chunks, "done": done}


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def collect(llm: LiteLlm, request: LlmRequest, stream: bool = False) -> list[LlmResponse]:
    return [response async for response in llm.generate_content_async(request, stream=stream)]


def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city.

    Args:
        city: the city.
    """
    return {"city": city, "celsius": 21}


# --- the constructor -----------------------------------------------------------------------


async def test_constructor_keywords_go_to_litellm_and_the_request_settings_win(
    server: ScriptedChatServer,
) -> None:
    server.script(completion("Paris."))
    llm, _ = make_llm(
        server,
        temperature=0.1,
        max_tokens=50,
        extra_headers={"x-team": "atlas"},
        messages=[{"role": "user", "content": "ignored: the agent sends the messages"}],
        stream=True,  # ignored: the runner decides
    )
    request = LlmRequest(
        contents=[user("Capital of France?")],
        config=types.GenerateContentConfig(system_instruction="Be terse.", temperature=0.7),
    )

    [response] = await collect(llm, request)

    [sent] = server.requests()
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["authorization"] == f"Bearer {KEY}"
    assert sent["headers"]["x-team"] == "atlas"
    assert sent["body"]["model"] == "scripted"  # litellm took the provider off the string
    assert sent["body"]["messages"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Capital of France?"},
    ]
    assert sent["body"]["temperature"] == 0.7  # the agent's config over the constructor's
    assert sent["body"]["max_tokens"] == 50
    assert "stream" not in sent["body"]
    assert response.content is not None and response.content.parts is not None
    assert response.content.parts[0].text == "Paris."
    assert KEY not in repr(llm) and KEY not in json.dumps(llm.model_dump(mode="json"))


def test_a_bad_retry_count_is_refused_naming_the_argument() -> None:
    with pytest.raises(ValueError, match="num_retries"):
        LiteLlm(model="openai/x", num_retries=-1)


# --- replies -------------------------------------------------------------------------------


async def test_a_reply_carries_usage_finish_reason_and_reasoning_as_a_thought(
    server: ScriptedChatServer,
) -> None:
    server.script(completion("Forty-", finish="length", reasoning_content="Count first."))
    llm, _ = make_llm(server)

    [response] = await collect(llm, LlmRequest(contents=[user("Count to forty-two.")]))

    assert response.finish_reason == types.FinishReason.MAX_TOKENS
    assert response.usage_metadata is not None
    assert response.usage_metadata.prompt_token_count == 11
    assert response.usage_metadata.candidates_token_count == 4
    assert response.usage_metadata.total_token_count == 15
    assert response.model_version == "scripted"
    assert response.content is not None
    thought, answer = response.content.parts or []
    assert (thought.text, thought.thought) == ("Count first.", True)
    assert (answer.text, answer.thought) == ("Forty-", None)


async def test_streaming_yields_each_piece_then_the_whole_reply(
    server: ScriptedChatServer,
) -> None:
    server.script(text_stream("Bon", "jour", "!"))
    llm, _ = make_llm(server)

    responses = await collect(llm, LlmRequest(contents=[user("Say hello in French.")]), True)

    partial = [r for r in responses if r.partial]
    assert [r.content.parts[0].text for r in partial if r.content and r.content.parts] == [
        "Bon",
        "jour",
        "!",
    ]
    final = responses[-1]
    assert not final.partial and final.turn_complete
    assert final.content is not None and final.content.parts is not None
    assert final.content.parts[0].text == "Bonjour!"
    assert final.finish_reason == types.FinishReason.STOP
    assert final.usage_metadata is not None and final.usage_metadata.total_token_count == 12
    [sent] = server.bodies()
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}


# --- tools, through an agent on SQLite -----------------------------------------------------


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
async def test_a_tool_call_and_its_follow_up_through_an_agent_on_sqlite(
    server: ScriptedChatServer, tmp_path: Path, streaming: bool
) -> None:
    if streaming:
        first: dict[str, Any] = {
            "chunks": [
                {
                    "choices": [
                        {
                            "index": 0,
                            "delta": {
                                "role": "assistant",
                                "tool_calls": [
                                    {
                                        "index": 0,
                                        "id": "call_7",
                                        "type": "function",
                                        "function": {"name": "get_weather", "arguments": '{"ci'},
                                    }
                                ],
                            },
                        }
                    ]
                },
                {
                    "choices": [
                        {
                            "index": 0,
                            "delta": {
                                "tool_calls": [
                                    {"index": 0, "function": {"arguments": 'ty": "Lyon"}'}}
                                ]
                            },
                        }
                    ]
                },
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
            ]
        }
        second = text_stream("21°C in ", "Lyon.")
    else:
        first = completion(calls=[call("call_7", "get_weather", city="Lyon")], finish="tool_calls")
        second = completion("21°C in Lyon.")
    server.script(first, second)
    llm, _ = make_llm(server)
    agent = Agent(name="forecaster", model=llm, instruction="Use tools.", tools=[get_weather])
    database = tmp_path / "sessions.db"
    runner = Runner(
        app=App(name=APP, root_agent=agent), session_service=SqliteSessionService(str(database))
    )
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id="s1")
    mode = StreamingMode.SSE if streaming else StreamingMode.NONE

    events = [
        event
        async for event in runner.run_async(
            user_id=USER,
            session_id="s1",
            new_message=user("Weather in Lyon?"),
            run_config=RunConfig(streaming_mode=mode),
        )
    ]

    final = [e for e in events if not e.partial]
    [model_call] = final[0].get_function_calls()
    assert (model_call.id, model_call.name, model_call.args) == (
        "call_7",
        "get_weather",
        {"city": "Lyon"},
    )
    [tool_result] = final[1].get_function_responses()
    assert tool_result.response == {"city": "Lyon", "celsius": 21}
    assert final[-1].content is not None and final[-1].content.parts is not None
    assert final[-1].content.parts[0].text == "21°C in Lyon."
    follow_up = server.bodies()[1]
    assistant, tool = follow_up["messages"][-2:]
    assert assistant["role"] == "assistant"
    assert assistant["tool_calls"] == [
        {
            "id": "call_7",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Lyon"}'},
        }
    ]
    assert tool == {
        "role": "tool",
        "tool_call_id": "call_7",
        "content": json.dumps({"city": "Lyon", "celsius": 21}),
    }
    assert server.bodies()[0]["tools"][0]["function"]["name"] == "get_weather"
    # Another store object on the same file (as another process would open it) reads it all.
    reopened = SqliteSessionService(str(database))
    session = await reopened.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert session is not None
    assert [e.id for e in session.events[1:]] == [e.id for e in final]  # after the user's
    assert session.events[1].get_function_calls()[0].id == "call_7"


# --- failures ------------------------------------------------------------------------------


async def test_a_rejected_request_is_one_typed_error_with_the_servers_words_and_no_key(
    server: ScriptedChatServer,
) -> None:
    server.script({"status": 400, "body": {"error": {"message": f"bad temperature for key {KEY}"}}})
    llm, sleeps = make_llm(server)

    with pytest.raises(ModelCallError) as raised:
        await collect(llm, LlmRequest(contents=[user("Hi")]))

    error = raised.value
    assert (error.status_code, error.retryable, error.attempts) == (400, False, 1)
    assert error.provider == "litellm" and error.model == "openai/scripted"
    assert "bad temperature for key <api key>" in str(error)
    assert KEY not in str(error)
    assert len(server.requests()) == 1 and sleeps.waits == []


async def test_a_failed_call_is_stored_as_an_error_event(
    server: ScriptedChatServer, tmp_path: Path
) -> None:
    server.script({"status": 404, "body": {"error": {"message": "model 'scripted' not found"}}})
    llm, _ = make_llm(server)
    service = SqliteSessionService(str(tmp_path / "sessions.db"))
    runner = Runner(
        app=App(name=APP, root_agent=Agent(name="helper", model=llm)), session_service=service
    )
    await service.create_session(app_name=APP, user_id=USER, session_id="s1")

    events = [
        e async for e in runner.run_async(user_id=USER, session_id="s1", new_message=user("Hi"))
    ]

    assert events[-1].error_code == "ModelCallError"
    assert "HTTP 404" in (events[-1].error_message or "")
    assert "model 'scripted' not found" in (events[-1].error_message or "")
    session = await service.get_session(app_name=APP, user_id=USER, session_id="s1")
    assert session is not None and session.events[-1].error_code == "ModelCallError"


async def test_a_rate_limit_is_retried_after_the_wait_the_server_asks_for(
    server: ScriptedChatServer,
) -> None:
    server.script(
        {
            "status": 429,
            "body": {"error": {"message": "slow down"}},
            "headers": {"retry-after": "7"},
        },
        completion("Done."),
    )
    llm, sleeps = make_llm(server)

    [response] = await collect(llm, LlmRequest(contents=[user("Hi")]))

    assert response.content is not None and response.content.parts is not None
    assert response.content.parts[0].text == "Done."
    assert sleeps.waits == [7.0]
    assert len(server.requests()) == 2  # litellm's own client did not retry as well


async def test_server_errors_are_retried_num_retries_times_then_raised(
    server: ScriptedChatServer,
) -> None:
    overloaded = {"status": 503, "body": {"error": {"message": "overloaded"}}}
    server.script(overloaded, overloaded, overloaded)
    llm, sleeps = make_llm(server, num_retries=2)

    with pytest.raises(ModelCallError) as raised:
        await collect(llm, LlmRequest(contents=[user("Hi")]))

    assert (raised.value.status_code, raised.value.retryable, raised.value.attempts) == (
        503,
        True,
        3,
    )
    assert "after 3 attempts" in str(raised.value) and "overloaded" in str(raised.value)
    assert len(sleeps.waits) == 2 and len(server.requests()) == 3


async def test_no_server_is_a_connection_failure_not_a_server_error() -> None:
    llm = LiteLlm(
        model="openai/scripted", api_base="http://127.0.0.1:9/v1", api_key=KEY, num_retries=0
    )

    with pytest.raises(ModelCallError) as raised:
        await collect(llm, LlmRequest(contents=[user("Hi")]))

    assert raised.value.status_code is None and raised.value.retryable
    assert "no connection" in str(raised.value) and "api_base" in str(raised.value)


async def test_a_stream_ending_before_any_data_is_retried(server: ScriptedChatServer) -> None:
    server.script({"chunks": [], "done": False}, text_stream("Here."))
    llm, sleeps = make_llm(server)

    responses = await collect(llm, LlmRequest(contents=[user("Hi")]), stream=True)

    assert responses[-1].content is not None and responses[-1].content.parts is not None
    assert responses[-1].content.parts[0].text == "Here."
    assert len(sleeps.waits) == 1 and len(server.requests()) == 2


async def test_a_stream_broken_after_text_is_raised_not_retried(
    server: ScriptedChatServer,
) -> None:
    server.script(text_stream("Half an ans", finish=None, done=False), completion("never sent"))
    llm, sleeps = make_llm(server)
    seen: list[LlmResponse] = []

    with pytest.raises(ModelCallError) as raised:
        async for response in llm.generate_content_async(
            LlmRequest(contents=[user("Hi")]), stream=True
        ):
            seen.append(response)

    assert [r.partial for r in seen] == [True]
    assert "not retried" in str(raised.value)
    assert sleeps.waits == [] and len(server.requests()) == 1


# --- other providers' model strings --------------------------------------------------------


async def test_an_ollama_chat_model_speaks_ollamas_api(server: ScriptedChatServer) -> None:
    server.script(
        {
            "json": {
                "model": "llama3.2",
                "created_at": "2026-01-01T00:00:00Z",
                "message": {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
                    ],
                },
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": 20,
                "eval_count": 6,
            }
        },
        {
            "lines": [
                {
                    "model": "llama3.2",
                    "message": {"role": "assistant", "content": "Cold "},
                    "done": False,
                },
                {
                    "model": "llama3.2",
                    "message": {"role": "assistant", "content": "in Oslo."},
                    "done": False,
                },
                {
                    "model": "llama3.2",
                    "message": {"role": "assistant", "content": ""},
                    "done": True,
                    "done_reason": "stop",
                    "prompt_eval_count": 30,
                    "eval_count": 4,
                },
            ]
        },
    )
    llm = LLMRegistry.new_llm("ollama_chat/llama3.2")
    assert isinstance(llm, LiteLlm)
    llm = LiteLlm(model="ollama_chat/llama3.2", api_base=server.url)
    request = LlmRequest(contents=[user("Weather in Oslo?")])
    request.config.tools = [
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(
                    name="get_weather",
                    parameters_json_schema={
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                    },
                )
            ]
        )
    ]

    [called] = await collect(llm, request)
    streamed = await collect(llm, LlmRequest(contents=[user("And now?")]), stream=True)

    assert called.content is not None and called.content.parts is not None
    function_call = called.content.parts[0].function_call
    assert function_call is not None and (function_call.name, function_call.args) == (
        "get_weather",
        {"city": "Oslo"},
    )
    assert called.usage_metadata is not None and called.usage_metadata.prompt_token_count == 20
    assert streamed[-1].content is not None and streamed[-1].content.parts is not None
    assert streamed[-1].content.parts[0].text == "Cold in Oslo."
    first, second = server.requests()
    assert first["path"] == second["path"] == "/api/chat"
    assert first["body"]["model"] == "llama3.2"
    assert first["body"]["tools"][0]["function"]["name"] == "get_weather"


def test_model_strings_resolve_as_in_adk_except_where_cairn_has_an_adapter() -> None:
    for model in ("ollama_chat/llama3.2", "groq/llama3-70b", "mistral/large", "ollama/qwen3"):
        assert LLMRegistry.resolve(model) is LiteLlm, model
    assert LLMRegistry.resolve("ollama/gemma3:4b") is Gemma3Ollama
    assert LLMRegistry.resolve("openai/gpt-4o-mini") is OpenAILlm  # cairn's own adapter
    assert isinstance(LiteLlm(model="openai/gpt-4o-mini").llm_client, LiteLLMClient)


def test_capabilities_say_whether_an_output_schema_goes_with_tools() -> None:
    assert LiteLlm(model="openai/gpt-4o").capabilities == LlmCapabilities(
        output_schema_and_tools=True
    )
    assert not LiteLlm(model="anthropic/claude-sonnet-4-5").capabilities.output_schema_and_tools
    with pytest.raises(ValueError):
        LiteLlm(model="openai/gpt-4o").capabilities.output_schema_and_tools = False  # type: ignore[misc]


async def test_gemma3_on_ollama_gets_its_tools_in_the_prompt_and_calls_in_text(
    server: ScriptedChatServer,
) -> None:
    server.script(
        {
            "json": {
                "model": "gemma3:4b",
                "created_at": "2026-01-01T00:00:00Z",
                "response": "Sure.\n```json\n"
                '{"name": "get_weather", "parameters": {"city": "Rome"}}\n```',
                "done": True,
                "done_reason": "stop",
                "prompt_eval_count": 40,
                "eval_count": 12,
            }
        }
    )
    llm = Gemma3Ollama(model="ollama/gemma3:4b", api_base=server.url)
    request = LlmRequest(
        contents=[
            user("Weather in Paris, then Rome?"),
            types.Content(
                role="model",
                parts=[
                    types.Part(
                        function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"})
                    )
                ],
            ),
            types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            name="get_weather", response={"celsius": 18}
                        )
                    )
                ],
            ),
        ],
        config=types.GenerateContentConfig(system_instruction="Use tools."),
    )
    request.config.tools = [
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(name="get_weather", description="The weather.")
            ]
        )
    ]

    [response] = await collect(llm, request)

    assert response.content is not None and response.content.parts is not None
    [part] = response.content.parts
    assert part.function_call is not None
    assert (part.function_call.name, part.function_call.args) == ("get_weather", {"city": "Rome"})
    [sent] = server.requests()
    assert sent["path"] == "/api/generate" and "tools" not in sent["body"]
    prompt = sent["body"]["prompt"]
    assert '"name":"get_weather"' in prompt and "The weather." in prompt
    assert '{"name": "get_weather", "parameters": {"city": "Paris"}}' in prompt
    assert 'Tool `get_weather` returned: {"celsius": 18}' in prompt


# --- without litellm -----------------------------------------------------------------------


def test_without_litellm_cairn_imports_and_lite_llm_names_the_extra() -> None:
    script = textwrap.dedent(
        """
        import sys

        class NoLitellm:
            def find_spec(self, name, path=None, target=None):
                if name == "litellm" or name.startswith("litellm."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NoLitellm())
        import cairn
        from cairn.models import LiteLlm
        from cairn.models.errors import ModelPackageMissingError
        try:
            LiteLlm(model="ollama_chat/llama3.2")
        except ModelPackageMissingError as error:
            print(error)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert "pip install 'cairn[litellm]'" in result.stdout
    assert issubclass(ModelPackageMissingError, ImportError)
