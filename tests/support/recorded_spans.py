"""Runs whose spans a ``SpanRecorder`` writes into their session store, for the span tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from google.genai import types

from cairn import Agent, LlmResponse, Runner
from cairn.sessions import BaseSessionService
from cairn.sessions.span_recorder import SpanRecorder, span_store_for
from cairn.sessions.span_store import SpanStore
from cairn.telemetry.setup import add_span_processor, remove_span_processor
from cairn.testing import Call, ScriptedLlm

APP, USER = "weather_app", "u1"


def get_weather(city: str) -> dict[str, Any]:
    """Look up the weather."""
    return {"city": city, "celsius": 23}


def get_forecast(city: str) -> dict[str, Any]:
    """Look up tomorrow's weather."""
    raise RuntimeError(f"the forecast service for {city} is down")


def reply(part: types.Part, *, prompt: int, answer: int) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[part]),
        finish_reason=types.FinishReason.STOP,
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt, candidates_token_count=answer
        ),
        model_version="scripted-1",
        turn_complete=True,
    )


def weather_agent() -> Agent:
    """Calls get_weather, then get_forecast (which raises), then answers: 3 model calls,
    11+20+30 tokens in and 3+4+5 out."""
    llm = ScriptedLlm(
        script=[
            reply(Call("get_weather", city="Hangzhou").part(), prompt=11, answer=3),
            reply(Call("get_forecast", city="Hangzhou").part(), prompt=20, answer=4),
            reply(types.Part(text="It is 23°C."), prompt=30, answer=5),
        ]
    )
    return Agent(
        name="weather",
        model=llm,
        instruction="Answer in one sentence.",
        tools=[get_weather, get_forecast],
    )


@asynccontextmanager
async def recording(service: BaseSessionService) -> AsyncIterator[tuple[SpanStore, SpanRecorder]]:
    """The session store's span store, with a recorder attached while the block runs."""
    store = span_store_for(service)
    assert store is not None
    recorder = SpanRecorder(store)
    add_span_processor(recorder)
    try:
        yield store, recorder
    finally:
        remove_span_processor(recorder)
        await recorder.close()


async def run_weather(service: BaseSessionService, session_id: str, text: str = "Weather?") -> str:
    """One invocation of ``weather_agent`` in session ``session_id``; its id."""
    runner = Runner(app_name=APP, agent=weather_agent(), session_service=service)
    if await service.get_session(app_name=APP, user_id=USER, session_id=session_id) is None:
        await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    message = types.Content(role="user", parts=[types.Part(text=text)])
    invocation = ""
    async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
        invocation = event.invocation_id
    await runner.close()
    return invocation
