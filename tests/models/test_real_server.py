"""OpenAILlm and cairn end to end against a real inference server on this machine:
llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct
(tests/support/model_server.py builds and starts it; CI requires it).

The model is tiny: tests assert what cairn does (requests sent, tools run once, events
stored, errors typed), never the model's wording. Tool turns are made deterministic by
the request (tests/models/local_agents/local.py's ``force``), not left to the model.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from google.genai import types
from tests.models.local_agents.local import RUNS_ENV, SETTINGS, force, runs
from tests.server.harness import asgi_client, run_body, sse_payloads
from tests.support.databases import service_unavailable
from tests.support.model_server import (
    ModelServer,
    ModelServerUnavailable,
    running_server,
)
from tests.support.waiting import BOUND_SECONDS, until

from cairn import Agent, FunctionTool, Runner, SqliteSessionService
from cairn.models import LlmRequest, LlmResponse
from cairn.models.errors import ContextWindowExceededError, ModelCallError
from cairn.models.openai_llm import OpenAILlm

ROOT = Path(__file__).resolve().parents[2]
AGENTS = Path(__file__).resolve().parent / "local_agents"


class Sent:
    """An HTTP client for OpenAILlm that keeps the JSON body of every request it sends."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def _keep(self, request: httpx2.Request) -> None:
        self.bodies.append(json.loads(request.content))

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(event_hooks={"request": [self._keep]})


def llm_for(server: ModelServer, sent: Sent | None = None, **fields: Any) -> OpenAILlm:
    return OpenAILlm(
        model=server.cairn_model,
        base_url=server.base_url,
        http_client=sent.client() if sent else None,
        **fields,
    )


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def collect(llm: OpenAILlm, request: LlmRequest, stream: bool = False) -> list[LlmResponse]:
    return [response async for response in llm.generate_content_async(request, stream=stream)]


WEATHER = types.FunctionDeclaration(
    name="get_weather",
    description="The current weather in a city.",
    parameters_json_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


def tool_request(*contents: types.Content, mode: str | None = None) -> LlmRequest:
    config = SETTINGS.model_copy(update={"tools": [types.Tool(function_declarations=[WEATHER])]})
    if mode is not None:
        calling = types.FunctionCallingConfig(
            mode=types.FunctionCallingConfigMode(mode),
            allowed_function_names=["get_weather"] if mode == "ANY" else None,
        )
        config.tool_config = types.ToolConfig(function_calling_config=calling)
    return LlmRequest(contents=list(contents), config=config)


# --- the adapter alone ---------------------------------------------------------------------


async def test_plain_text(model_server: ModelServer) -> None:
    llm = llm_for(model_server)
    [response] = await collect(llm, LlmRequest(contents=[user("Say hello.")], config=SETTINGS))

    assert response.error_code is None
    assert response.content is not None and response.content.role == "model"
    assert response.content.parts and response.content.parts[0].text
    assert response.finish_reason in (types.FinishReason.STOP, types.FinishReason.MAX_TOKENS)
    assert response.usage_metadata is not None and response.usage_metadata.prompt_token_count
    assert response.model_version == model_server.model


async def test_streaming_yields_partials_then_their_whole(model_server: ModelServer) -> None:
    llm = llm_for(model_server)
    request = LlmRequest(contents=[user("Count from one to five.")], config=SETTINGS)
    responses = await collect(llm, request, stream=True)

    *partials, final = responses
    assert len(partials) >= 2 and all(r.partial for r in partials)
    assert not final.partial and final.turn_complete
    streamed = "".join(
        p.content.parts[0].text or "" for p in partials if p.content and p.content.parts
    )
    assert final.content is not None and final.content.parts
    assert final.content.parts[0].text == streamed


async def test_a_forced_tool_call_and_its_follow_up(model_server: ModelServer) -> None:
    sent = Sent()
    llm = llm_for(model_server, sent)
    ask = user("What is the weather in Paris?")
    [called] = await collect(llm, tool_request(ask, mode="ANY"))

    assert called.content is not None and called.content.parts
    [call] = [p.function_call for p in called.content.parts if p.function_call]
    assert call.name == "get_weather" and isinstance(call.args, dict)
    assert call.id and call.id.startswith("call_")  # the server's id, kept
    result = types.Part(
        function_response=types.FunctionResponse(
            id=call.id, name="get_weather", response={"sky": "sunny"}
        )
    )
    [answer] = await collect(
        llm, tool_request(ask, called.content, types.Content(role="user", parts=[result]))
    )

    assert answer.error_code is None  # the follow-up request was accepted (HTTP 200)
    follow_up = sent.bodies[-1]
    assistant = follow_up["messages"][1]
    assert assistant["role"] == "assistant" and assistant["content"] == ""
    assert assistant["tool_calls"][0]["id"] == call.id
    assert follow_up["messages"][2] == {
        "role": "tool",
        "tool_call_id": call.id,
        "content": '{"sky": "sunny"}',
    }
    assert follow_up["tool_choice"] == "auto"  # declared tools, no mode set


async def test_a_streamed_forced_tool_call(model_server: ModelServer) -> None:
    llm = llm_for(model_server)
    responses = await collect(llm, tool_request(user("Weather in Rome?"), mode="ANY"), True)

    final = responses[-1]
    assert final.content is not None and final.content.parts
    [call] = [p.function_call for p in final.content.parts if p.function_call]
    assert call.name == "get_weather" and call.id
    assert final.finish_reason == types.FinishReason.STOP


async def test_a_stream_that_fails_after_200_is_the_servers_failure(
    model_server: ModelServer,
) -> None:
    # This server cannot stream a request whose tool choice is "auto": it answers 200,
    # then ends the stream with nothing in it, every time.
    sent = Sent()
    llm = llm_for(model_server, sent)
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    llm._sleep = no_wait
    with pytest.raises(ModelCallError) as raised:
        await collect(llm, tool_request(user("Weather in Oslo?")), stream=True)

    error = raised.value
    # Retried (nothing was shown) until it failed the same way twice: two requests, and a
    # third when the pooled connection the broken stream left was refused in between.
    assert 2 <= len(sent.bodies) <= 3 and error.attempts == len(sent.bodies)
    assert len(waits) == len(sent.bodies) - 1
    assert error.retryable is False and error.status_code is None
    message = str(error)
    assert "stream ended with no data and no finish reason" in message
    assert "the model returned" not in message  # not blamed on the model
    assert "--no-stream" in message and "StreamingMode.NONE" in message


async def test_the_servers_own_500_is_not_retried_as_transient(
    model_server: ModelServer,
) -> None:
    # This server validates response_format itself and answers a JSON schema with a 500
    # (its validation error and a traceback), the same way each time.
    sent = Sent()
    llm = llm_for(model_server, sent)
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    llm._sleep = no_wait
    config = SETTINGS.model_copy(
        update={"response_json_schema": {"type": "object", "properties": {"a": {"type": "string"}}}}
    )
    with pytest.raises(ModelCallError) as raised:
        await collect(llm, LlmRequest(contents=[user("Give JSON.")], config=config))

    error = raised.value
    assert error.status_code == 500 and error.retryable is False and error.attempts == 2
    assert len(sent.bodies) == 2 and len(waits) == 1
    assert "the same way twice" in str(error)
    assert "validation error" in error.provider_message
    assert len(error.provider_message) < 700  # the server sent a traceback: capped


async def test_a_context_overflow_is_typed_and_then_checked_before_sending(
    model_server: ModelServer,
) -> None:
    sent = Sent()
    llm = llm_for(model_server, sent)
    huge = LlmRequest(contents=[user("word " * 3000)], config=SETTINGS)

    with pytest.raises(ContextWindowExceededError) as raised:
        await collect(llm, huge)
    error = raised.value
    assert error.status_code == 400 and error.retryable is False
    assert error.context_window == model_server.context_window  # the server said it
    message = str(error)
    assert "stays in the session's history" in message
    assert "Rewind" in message and "compaction" in message
    assert len(sent.bodies) == 1

    with pytest.raises(ContextWindowExceededError) as again:
        await collect(llm, huge)
    assert again.value.before_sending and "It was not sent" in str(again.value)
    assert len(sent.bodies) == 1  # refused before sending
    [fits] = await collect(llm, LlmRequest(contents=[user("Hi.")], config=SETTINGS))
    assert fits.error_code is None and len(sent.bodies) == 2


# --- a server restart inside the retry window ----------------------------------------------


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[ModelServer]:
    try:
        with running_server(tmp_path) as server:
            yield server
    except ModelServerUnavailable as error:
        service_unavailable(f"no local model server: {error}")


async def test_a_restarting_server_is_waited_for(own_server: ModelServer) -> None:
    own_server.stop()
    llm = llm_for(own_server)
    waits: list[float] = []

    async def wait(seconds: float) -> None:
        waits.append(seconds)
        await asyncio.sleep(seconds)

    llm._sleep = wait
    call = asyncio.create_task(
        collect(llm, LlmRequest(contents=[user("Say hi.")], config=SETTINGS))
    )

    async def refused_once() -> bool:
        return bool(waits)

    await until(refused_once, "the adapter retries after a refused connection")
    await asyncio.to_thread(own_server.start)
    [response] = await asyncio.wait_for(call, BOUND_SECONDS)

    assert response.error_code is None and response.content is not None
    assert sum(waits) <= llm.retry_window


# --- agents through the Runner -------------------------------------------------------------


def _forecaster(server: ModelServer, sent: Sent, ran: list[str]) -> Agent:
    def get_weather(city: str) -> dict[str, object]:
        """The current weather in a city."""
        ran.append(city)
        return {"city": city, "sky": "sunny", "celsius": 21}

    return Agent(
        name="forecaster",
        model=llm_for(server, sent),
        instruction="You report the weather. Use the get_weather tool.",
        tools=[get_weather],
        generate_content_config=SETTINGS,
        before_model_callback=force("get_weather"),
    )


async def test_an_agent_runs_its_tool_once_and_answers(
    model_server: ModelServer, tmp_path: Path
) -> None:
    sent, ran = Sent(), []
    service = SqliteSessionService(tmp_path / "sessions.db")
    runner = Runner(
        app_name="weather", agent=_forecaster(model_server, sent, ran), session_service=service
    )
    await service.create_session(app_name="weather", user_id="u", session_id="s")
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id="s", new_message=user("Weather in Paris?")
        )
    ]
    await runner.close()

    assert len(ran) == 1
    [call] = [c for e in events for c in e.get_function_calls()]
    [result] = [r for e in events for r in e.get_function_responses()]
    assert result.id == call.id and call.id and call.id.startswith("call_")
    assert events[-1].is_final_response() and events[-1].error_code is None
    assert len(sent.bodies) == 2
    assert sent.bodies[1]["messages"][-1]["role"] == "tool"
    assert json.loads(sent.bodies[1]["messages"][-1]["content"])["city"] == ran[0]
    stored = await SqliteSessionService(tmp_path / "sessions.db").get_session(
        app_name="weather", user_id="u", session_id="s"
    )
    assert stored is not None
    assert stored.events[0].author == "user"
    assert [e.id for e in stored.events[1:]] == [e.id for e in events]


async def test_a_confirmation_pauses_and_resumes_in_a_new_runner(
    model_server: ModelServer, tmp_path: Path
) -> None:
    refunded: list[str] = []

    def refund(order: str) -> dict[str, object]:
        """Refund an order to the customer."""
        refunded.append(order)
        return {"order": order, "refunded": True}

    def cashier() -> Runner:
        agent = Agent(
            name="cashier",
            model=llm_for(model_server),
            instruction="You refund orders with the refund tool.",
            tools=[FunctionTool(refund, require_confirmation=True)],
            generate_content_config=SETTINGS,
            before_model_callback=force("refund"),
        )
        service = SqliteSessionService(tmp_path / "sessions.db")
        return Runner(app_name="shop", agent=agent, session_service=service)

    first = cashier()
    await first.session_service.create_session(app_name="shop", user_id="u", session_id="s")
    async for _ in first.run_async(
        user_id="u", session_id="s", new_message=user("Refund order 42.")
    ):
        pass
    [waiting] = await first.list_pending_interrupts(user_id="u", session_id="s")
    await first.close()
    assert waiting.kind == "confirmation" and refunded == []

    second = cashier()  # as another process would: a new runner on the same file
    yes = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=waiting.id, name=waiting.name, response={"confirmed": True}
                )
            )
        ],
    )
    events = [e async for e in second.run_async(user_id="u", session_id="s", new_message=yes)]
    assert await second.list_pending_interrupts(user_id="u", session_id="s") == []
    await second.close()

    assert len(refunded) == 1
    assert events[-1].is_final_response() and events[-1].error_code is None


# --- cairn run, in real processes ----------------------------------------------------------


def cairn_run(
    server: ModelServer, tmp_path: Path, *args: str | Path, input: str
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        **server.env(),
        RUNS_ENV: str(tmp_path / "runs.txt"),
        "NO_COLOR": "1",
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.run(
        [sys.executable, "-m", "cairn.cli", "run", *map(str, args)],
        input=input,
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
        cwd=tmp_path,
        env=env,
    )


@pytest.mark.parametrize("streaming", [False, True], ids=["no-stream", "stream"])
def test_cairn_run_with_a_tool_agent(
    model_server: ModelServer, tmp_path: Path, streaming: bool
) -> None:
    flags = [] if streaming else ["--no-stream"]
    done = cairn_run(
        model_server,
        tmp_path,
        AGENTS / "forecaster",
        "--store",
        "memory://",
        *flags,
        input="What is the weather in Paris?\n",
    )

    assert done.returncode == 0, done.stderr
    assert "→ get_weather(" in done.stdout and "← get_weather: " in done.stdout
    assert re.search(r"^forecaster: \S", done.stdout, re.MULTILINE), done.stdout
    assert "✗" not in done.stdout and "Traceback" not in done.stderr
    assert runs(tmp_path / "runs.txt") == ["get_weather"]


def test_cairn_run_reports_a_server_that_cannot_stream_in_one_line(
    model_server: ModelServer, tmp_path: Path
) -> None:
    done = cairn_run(
        model_server, tmp_path, AGENTS / "picker", "--store", "memory://", input="Hi there.\n"
    )

    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if "✗" in line]
    assert line.startswith("  ✗ picker: ModelCallError: ") and "--no-stream" in line
    assert "Traceback" not in done.stdout + done.stderr


def test_multi_turn_on_sqlite_across_two_processes(
    model_server: ModelServer, tmp_path: Path
) -> None:
    store = tmp_path / "sessions.db"
    agent = AGENTS / "chatter"
    first = cairn_run(
        model_server, tmp_path, agent, "--store", store, "--no-stream", input="My name is Ada.\n"
    )
    assert first.returncode == 0, first.stderr
    session = re.search(r"new session (\S+)", first.stdout)
    assert session is not None
    second = cairn_run(
        model_server,
        tmp_path,
        agent,
        "--store",
        store,
        "--session",
        session[1],
        "--no-stream",
        input="What is my name?\n",
    )
    assert second.returncode == 0, second.stderr

    # Whole replies (--no-stream) carry usage: this server sends none in a stream.
    stored = asyncio.run(_stored(store, "chatter", session[1]))
    authors = [e.author for e in stored]
    assert authors == ["user", "chatter", "user", "chatter"]
    one, two = (e.usage_metadata for e in stored if e.author == "chatter")
    assert one is not None and two is not None
    assert one.prompt_token_count and one.candidates_token_count and two.prompt_token_count
    # The second process sent the first turn along: its prompt holds both exchanges.
    assert two.prompt_token_count > one.prompt_token_count + one.candidates_token_count


async def _stored(store: Path, app: str, session_id: str) -> list[Any]:
    service = SqliteSessionService(store)
    try:
        session = await service.get_session(app_name=app, user_id="user", session_id=session_id)
    finally:
        await service.close()
    assert session is not None
    return [e for e in session.events if e.content is not None]


# --- the HTTP server -----------------------------------------------------------------------


async def test_run_sse_streams_a_tool_turn(
    model_server: ModelServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name, value in {**model_server.env(), RUNS_ENV: str(tmp_path / "runs.txt")}.items():
        monkeypatch.setenv(name, value)
    async with asgi_client(agents_dir=AGENTS, store=str(tmp_path / "sessions.db")) as client:
        await client.post("/apps/forecaster/users/ada/sessions", json={"sessionId": "s"})
        response = await client.post(
            "/run_sse",
            json=run_body("forecaster", "s", "Weather in Paris?", streaming=True),
            timeout=BOUND_SECONDS,
        )
        assert response.status_code == 200
        events = [json.loads(payload) for payload in sse_payloads(response.text)]
        stored = (await client.get("/apps/forecaster/users/ada/sessions/s")).json()["events"]

    assert all("error" not in e and not e.get("errorCode") for e in events)
    parts = [part for e in events for part in (e.get("content") or {}).get("parts", [])]
    calls = [p["functionCall"] for p in parts if "functionCall" in p]
    results = [p["functionResponse"] for p in parts if "functionResponse" in p]
    assert [c["name"] for c in calls] == ["get_weather"]
    assert [r["id"] for r in results] == [calls[0]["id"]]
    assert not events[-1].get("partial") and events[-1]["content"]["parts"][0]["text"]
    assert stored[-1] == events[-1]
    assert runs(tmp_path / "runs.txt") == ["get_weather"]
