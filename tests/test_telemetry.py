"""OpenTelemetry spans: invocation > invoke_agent > chat / execute_tool, with cairn's ids."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from google.genai import types
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.trace import StatusCode

from cairn import Agent, Event, InMemoryRunner, LlmAgent, LlmResponse, RunConfig
from cairn.agents import StreamingMode
from cairn.testing import Call, ScriptedLlm, Stream

APP, USER, SESSION = "demo", "u1", "s1"


class _CurrentTest(SpanProcessor):
    """Hands finished spans to the running test's list, if a test is listening."""

    spans: list[ReadableSpan] | None = None

    def on_end(self, span: ReadableSpan) -> None:
        if self.spans is not None:
            self.spans.append(span)


@pytest.fixture(scope="session")
def _collector() -> _CurrentTest:
    # The global provider can be set only once per process: set it (or join the SDK
    # provider something else set) once, and route spans to the current test only.
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())
    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    collector = _CurrentTest()
    provider.add_span_processor(collector)
    return collector


@pytest.fixture
def spans(_collector: _CurrentTest) -> Iterator[list[ReadableSpan]]:
    _collector.spans = []
    yield _collector.spans
    _collector.spans = None


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def reply(*parts: types.Part, prompt: int, answer: int) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=list(parts)),
        finish_reason=types.FinishReason.STOP,
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt, candidates_token_count=answer
        ),
        turn_complete=True,
    )


async def run(agent: LlmAgent, text: str = "hi", **kwargs: Any) -> list[Event]:
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    return [
        e
        async for e in runner.run_async(
            user_id=USER, session_id=SESSION, new_message=said(text), **kwargs
        )
    ]


def by_name(spans: list[ReadableSpan]) -> dict[str, ReadableSpan]:
    named = {span.name: span for span in spans}
    assert len(named) == len(spans), [span.name for span in spans]
    return named


def parent_of(span: ReadableSpan, spans: list[ReadableSpan]) -> str | None:
    if span.parent is None:
        return None
    assert span.context is not None and span.parent.trace_id == span.context.trace_id
    return next(s.name for s in spans if s.context and s.context.span_id == span.parent.span_id)


def tree(spans: list[ReadableSpan]) -> dict[str, str | None]:
    return {span.name: parent_of(span, spans) for span in spans}


def get_weather(city: str) -> dict[str, Any]:
    """Look up the weather."""
    return {"city": city, "celsius": 23}


async def test_spans_nest_and_carry_ids_tokens_and_tool_calls(
    spans: list[ReadableSpan],
) -> None:
    llm = ScriptedLlm(
        script=[
            reply(Call("get_weather", id="call-1", city="Hangzhou").part(), prompt=11, answer=3),
            reply(types.Part(text="23°C."), prompt=20, answer=4),
        ]
    )
    events = await run(Agent(name="weather", model=llm, tools=[get_weather]))

    assert len(spans) == 5  # two model calls: same name, told apart by token counts
    chats = sorted(
        (s for s in spans if s.name == "chat scripted"),
        key=lambda s: s.attributes["gen_ai.usage.input_tokens"] if s.attributes else 0,
    )
    others = by_name([s for s in spans if s.name != "chat scripted"])
    assert tree(list(others.values())) == {
        "invocation": None,
        "invoke_agent weather": "invocation",
        "execute_tool get_weather": "invoke_agent weather",
    }
    assert [parent_of(chat, spans) for chat in chats] == ["invoke_agent weather"] * 2
    assert all(span.status.status_code == StatusCode.UNSET for span in spans)

    invocation_id = events[0].invocation_id
    ids = {
        "cairn.app_name": APP,
        "cairn.user_id": USER,
        "cairn.session_id": SESSION,
        "cairn.invocation_id": invocation_id,
    }
    for span in spans:
        assert span.attributes is not None
        assert {k: span.attributes.get(k) for k in ids} == ids, span.name

    agent = others["invoke_agent weather"].attributes
    assert agent is not None
    assert agent["gen_ai.operation.name"] == "invoke_agent"
    assert agent["gen_ai.agent.name"] == "weather"

    first, second = (chat.attributes for chat in chats)
    assert first is not None and second is not None
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.request.model"] == "scripted"
    assert (first["gen_ai.usage.input_tokens"], first["gen_ai.usage.output_tokens"]) == (11, 3)
    assert (second["gen_ai.usage.input_tokens"], second["gen_ai.usage.output_tokens"]) == (20, 4)
    assert second["gen_ai.response.finish_reasons"] == ("stop",)
    assert chats[0].kind == trace.SpanKind.CLIENT

    tool = others["execute_tool get_weather"]
    assert tool.attributes is not None
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "get_weather"
    assert tool.attributes["gen_ai.tool.call.id"] == "call-1"
    # The tool ran after the first model call ended, and before the second began.
    assert chats[0].end_time is not None and tool.start_time is not None
    assert chats[0].end_time <= tool.start_time
    assert tool.end_time is not None and chats[1].start_time is not None
    assert tool.end_time <= chats[1].start_time


def always_fails(city: str) -> dict[str, Any]:
    """A broken tool."""
    raise RuntimeError(f"no weather service for {city}")


async def test_a_failing_tool_is_an_error_on_its_span_only(spans: list[ReadableSpan]) -> None:
    llm = ScriptedLlm(script=[Call("always_fails", id="call-9", city="Oslo"), "Sorry."])
    events = await run(Agent(name="weather", model=llm, tools=[always_fails]))
    assert events[-1].content.parts[0].text == "Sorry."  # the agent carried on

    tool = next(s for s in spans if s.name == "execute_tool always_fails")
    assert tool.status.status_code == StatusCode.ERROR
    assert tool.status.description == "RuntimeError: no weather service for Oslo"
    assert tool.attributes is not None
    assert tool.attributes["error.type"] == "RuntimeError"
    assert tool.attributes["gen_ai.tool.call.id"] == "call-9"
    [exception] = tool.events
    assert exception.name == "exception" and exception.attributes is not None
    assert exception.attributes["exception.type"] == "RuntimeError"
    others = [s for s in spans if s is not tool]
    assert all(s.status.status_code == StatusCode.UNSET for s in others)


async def test_a_failing_model_is_an_error_on_the_chat_span(spans: list[ReadableSpan]) -> None:
    llm = ScriptedLlm(script=[ConnectionError("provider down")])
    events = await run(Agent(name="weather", model=llm))
    assert events[-1].error_code == "ConnectionError"  # reported as an event, as before

    named = by_name(spans)
    chat = named["chat scripted"]
    assert chat.status.status_code == StatusCode.ERROR
    assert chat.attributes is not None and chat.attributes["error.type"] == "ConnectionError"
    assert [e.name for e in chat.events] == ["exception"]
    assert tree(spans) == {
        "invocation": None,
        "invoke_agent weather": "invocation",
        "chat scripted": "invoke_agent weather",
    }
    assert named["invoke_agent weather"].status.status_code == StatusCode.UNSET


async def test_an_error_response_marks_the_chat_span(spans: list[ReadableSpan]) -> None:
    blocked = LlmResponse(error_code="SAFETY", error_message="blocked", turn_complete=True)
    await run(Agent(name="weather", model=ScriptedLlm(script=[blocked])))
    chat = by_name(spans)["chat scripted"]
    assert chat.status.status_code == StatusCode.ERROR
    assert chat.status.description == "blocked"
    assert chat.attributes is not None and chat.attributes["error.type"] == "SAFETY"


async def test_no_span_leaks_into_the_caller_between_events(spans: list[ReadableSpan]) -> None:
    llm = ScriptedLlm(script=[Stream(["It ", "is ", "sunny."])])
    agent = Agent(name="weather", model=llm)
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("caller") as caller:
        seen = []
        async for event in runner.run_async(
            user_id=USER,
            session_id=SESSION,
            new_message=said("weather?"),
            run_config=RunConfig(streaming_mode=StreamingMode.SSE),
        ):
            # While the caller holds an event, its own span is current, not cairn's.
            assert trace.get_current_span() is caller
            seen.append(event.partial)
    assert seen == [True, True, True, None]
    assert tree(spans) == {
        "caller": None,
        "invocation": "caller",
        "invoke_agent weather": "invocation",
        "chat scripted": "invoke_agent weather",
    }


async def test_spans_end_when_the_caller_stops_early(spans: list[ReadableSpan]) -> None:
    llm = ScriptedLlm(script=[Stream(["It ", "is ", "sunny."])])
    agent = Agent(name="weather", model=llm)
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    events = runner.run_async(
        user_id=USER,
        session_id=SESSION,
        new_message=said("weather?"),
        run_config=RunConfig(streaming_mode=StreamingMode.SSE),
    )
    first = await anext(events)
    assert first.partial
    await events.aclose()
    assert trace.get_current_span() is trace.INVALID_SPAN

    # Closing the run closes everything inside it at once, innermost first.
    assert [s.name for s in spans] == ["chat scripted", "invoke_agent weather", "invocation"]
    assert tree(spans) == {
        "invocation": None,
        "invoke_agent weather": "invocation",
        "chat scripted": "invoke_agent weather",
    }
    assert all(s.status.status_code == StatusCode.UNSET for s in spans)
    # The session is free again: the next invocation runs at once.
    llm.script.append("Hello.")
    again = [
        e async for e in runner.run_async(user_id=USER, session_id=SESSION, new_message=said("hi"))
    ]
    assert again[-1].content.parts[0].text == "Hello."


async def test_a_transfer_nests_the_next_agent_under_the_first(
    spans: list[ReadableSpan],
) -> None:
    helper = Agent(name="helper", model=ScriptedLlm(script=["Helped."]), description="helps")
    root = Agent(
        name="root",
        model=ScriptedLlm(script=[Call("transfer_to_agent", id="t-1", agent_name="helper")]),
        sub_agents=[helper],
    )
    await run(root)
    assert sorted((s.name, parent_of(s, spans)) for s in spans) == [
        ("chat scripted", "invoke_agent helper"),
        ("chat scripted", "invoke_agent root"),
        ("execute_tool transfer_to_agent", "invoke_agent root"),
        ("invocation", None),
        ("invoke_agent helper", "invoke_agent root"),
        ("invoke_agent root", "invocation"),
    ]


async def slow_lookup(city: str) -> dict[str, Any]:
    """Look up slowly."""
    await asyncio.sleep(0.01)
    return {"city": city}


async def test_concurrent_tool_calls_are_sibling_spans(spans: list[ReadableSpan]) -> None:
    calls = [Call("slow_lookup", id="a", city="Oslo"), Call("slow_lookup", id="b", city="Rome")]
    await run(
        Agent(name="weather", model=ScriptedLlm(script=[calls, "Done."]), tools=[slow_lookup])
    )
    tools = [s for s in spans if s.name == "execute_tool slow_lookup"]
    assert sorted(s.attributes["gen_ai.tool.call.id"] for s in tools if s.attributes) == ["a", "b"]
    assert [parent_of(s, spans) for s in tools] == ["invoke_agent weather"] * 2
    first, second = sorted(tools, key=lambda s: s.start_time or 0)
    assert second.start_time is not None and first.end_time is not None
    assert second.start_time < first.end_time  # they ran at the same time
