"""FallbackModel with a really failing primary: a local HTTP server answering 503 or 429
(tests/support/scripted_chat_server.py, its own process), reached through real adapters."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from pydantic import ValidationError
from tests.support.scripted_chat_server import ScriptedChatServer, scripted_chat_server

from cairn import Agent, App, Runner
from cairn.models import FallbackModel, LlmCapabilities, LlmRequest, LlmResponse
from cairn.models.errors import ModelCallError
from cairn.models.lite_llm import LiteLlm
from cairn.models.openai_llm import OpenAILlm
from cairn.sessions.sqlite_session_service import SqliteSessionService

KEY = "sk-fallback-test"


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedChatServer]:
    with scripted_chat_server() as running:
        yield running


def lite(server: ScriptedChatServer, name: str, **kwargs: Any) -> LiteLlm:
    """A LiteLlm on the scripted server that does not retry itself (so each failure is one
    request), and never waits."""
    kwargs.setdefault("num_retries", 0)
    llm = LiteLlm(model=f"openai/{name}", api_base=server.base_url, api_key=KEY, **kwargs)

    async def no_wait(seconds: float) -> None:
        return None

    llm._sleep = no_wait
    return llm


def completion(text: str) -> dict[str, Any]:
    return {
        "completion": {
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ]
        }
    }


def failure(status: int, message: str = "unavailable") -> dict[str, Any]:
    return {"status": status, "body": {"error": {"message": message}}}


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def collect(
    llm: FallbackModel, request: LlmRequest, stream: bool = False
) -> list[LlmResponse]:
    return [r async for r in llm.generate_content_async(request, stream=stream)]


def text_of(response: LlmResponse) -> str:
    assert response.content is not None and response.content.parts is not None
    return "".join(part.text or "" for part in response.content.parts)


@pytest.mark.parametrize("status", [503, 429])
async def test_a_retryable_failure_moves_the_agent_to_the_next_model(
    server: ScriptedChatServer, tmp_path: Path, status: int
) -> None:
    server.script(failure(status), completion("From the backup."))
    model = FallbackModel(models=[lite(server, "primary"), lite(server, "backup")])
    service = SqliteSessionService(str(tmp_path / "sessions.db"))
    runner = Runner(
        app=App(name="app", root_agent=Agent(name="helper", model=model)), session_service=service
    )
    await service.create_session(app_name="app", user_id="ada", session_id="s1")

    events = [
        e async for e in runner.run_async(user_id="ada", session_id="s1", new_message=user("Hi"))
    ]

    assert text_of(events[-1]) == "From the backup."
    assert [body["model"] for body in server.bodies()] == ["primary", "backup"]
    session = await service.get_session(app_name="app", user_id="ada", session_id="s1")
    assert session is not None and text_of(session.events[-1]) == "From the backup."


async def test_a_string_entry_is_resolved_by_the_registry(
    server: ScriptedChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script(failure(502), completion("OpenAILlm answered."))
    model = FallbackModel(models=[lite(server, "primary"), "openai/backup"])

    [response] = await collect(model, LlmRequest(model="primary", contents=[user("Hi")]))

    assert text_of(response) == "OpenAILlm answered."
    assert isinstance(model._delegate("openai/backup"), OpenAILlm)
    assert server.bodies()[1]["model"] == "backup"


async def test_a_rejected_request_is_raised_without_trying_the_next_model(
    server: ScriptedChatServer,
) -> None:
    server.script(failure(400, "bad request"), completion("never"))
    model = FallbackModel(models=[lite(server, "primary"), lite(server, "backup")])

    with pytest.raises(ModelCallError) as raised:
        await collect(model, LlmRequest(contents=[user("Hi")]))

    assert raised.value.status_code == 400
    assert [body["model"] for body in server.bodies()] == ["primary"]


async def test_a_call_that_got_no_answer_is_not_sent_to_another_model(
    server: ScriptedChatServer,
) -> None:
    server.script(completion("never"))
    unreachable = LiteLlm(
        model="openai/primary", api_base="http://127.0.0.1:9/v1", api_key=KEY, num_retries=0
    )
    model = FallbackModel(models=[unreachable, lite(server, "backup")])

    with pytest.raises(ModelCallError) as raised:
        await collect(model, LlmRequest(contents=[user("Hi")]))

    assert raised.value.status_code is None
    assert server.requests() == []


async def test_the_last_models_failure_reaches_the_caller(server: ScriptedChatServer) -> None:
    server.script(failure(503, "first down"), failure(429, "second throttled"))
    model = FallbackModel(models=[lite(server, "primary"), lite(server, "backup")])

    with pytest.raises(ModelCallError) as raised:
        await collect(model, LlmRequest(contents=[user("Hi")]))

    assert raised.value.status_code == 429 and "second throttled" in str(raised.value)


async def test_the_statuses_that_fall_back_can_be_chosen(server: ScriptedChatServer) -> None:
    server.script(failure(503), completion("never"))
    model = FallbackModel(
        models=[lite(server, "primary"), lite(server, "backup")],
        retriable_status_codes=frozenset({429}),
    )

    with pytest.raises(ModelCallError):
        await collect(model, LlmRequest(contents=[user("Hi")]))

    assert len(server.requests()) == 1
    assert {429, 500, 502, 503, 504} == FallbackModel.DEFAULT_STATUS_CODES


async def test_a_stream_that_fails_after_output_stays_with_its_model(
    server: ScriptedChatServer,
) -> None:
    broken = {
        "chunks": [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Half"}}]}],
        "done": False,
    }
    server.script(broken, completion("never"))
    model = FallbackModel(models=[lite(server, "primary"), lite(server, "backup")])
    seen: list[LlmResponse] = []

    with pytest.raises(ModelCallError):
        async for response in model.generate_content_async(
            LlmRequest(contents=[user("Hi")]), stream=True
        ):
            seen.append(response)

    assert [text_of(r) for r in seen] == ["Half"]
    assert len(server.requests()) == 1


class EditingLiteLlm(LiteLlm):
    """A model that edits the request it is given before sending it (as Gemma's does)."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        llm_request.contents.append(user("an edit only this model wanted"))
        llm_request.config.temperature = 1.5
        async for response in super().generate_content_async(llm_request, stream):
            yield response


async def test_the_next_model_gets_the_request_without_the_failed_models_edits(
    server: ScriptedChatServer,
) -> None:
    server.script(failure(500), completion("Clean."))
    editing = EditingLiteLlm(
        model="openai/primary", api_base=server.base_url, api_key=KEY, num_retries=0
    )
    model = FallbackModel(models=[editing, lite(server, "backup")])

    await collect(model, LlmRequest(contents=[user("Hi")]))

    primary, backup = server.bodies()
    assert len(primary["messages"]) == 2 and primary["temperature"] == 1.5
    assert backup["messages"] == [{"role": "user", "content": "Hi"}]
    assert "temperature" not in backup


def test_the_model_name_is_the_primarys_and_cannot_be_set_otherwise(
    server: ScriptedChatServer,
) -> None:
    model = FallbackModel(models=["gemini-2.5-pro", lite(server, "backup")])
    assert model.model == "gemini-2.5-pro"
    assert (
        FallbackModel(models=["gemini-2.5-pro"], model="gemini-2.5-pro").model == "gemini-2.5-pro"
    )
    with pytest.raises(ValidationError, match="first entry of models"):
        FallbackModel(models=["gemini-2.5-pro"], model="gemini-2.5-flash")
    with pytest.raises(ValidationError):
        FallbackModel(models=[])


def test_capabilities_are_the_primarys(server: ScriptedChatServer) -> None:
    model = FallbackModel(models=[lite(server, "primary"), "anthropic/claude-sonnet-4-5"])
    assert model.capabilities == LlmCapabilities(output_schema_and_tools=True)
