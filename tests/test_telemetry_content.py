"""A model call's span says what was sent and got, in the GenAI conventions' shapes, when
content capture is on; long content is cut with a visible marker; credentials never enter."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.genai import types
from tests.support.recorded_spans import APP, USER, recording, run_weather, weather_agent

from cairn import Runner
from cairn.sessions import InMemorySessionService
from cairn.sessions.span_store import StoredSpan
from cairn.telemetry import content
from cairn.telemetry.content import CAPTURE_ENV, MAX_STRING_CHARS


async def weather_spans(text: str = "Weather?", **agent_fields: Any) -> list[StoredSpan]:
    service = InMemorySessionService()
    async with recording(service) as (spans, _):
        if agent_fields:
            agent = weather_agent().model_copy(update=agent_fields)
            runner = Runner(app_name=APP, agent=agent, session_service=service)
            await service.create_session(app_name=APP, user_id=USER, session_id="s1")
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for event in runner.run_async(user_id=USER, session_id="s1", new_message=message):
                invocation = event.invocation_id
        else:
            invocation = await run_weather(service, "s1", text)
    return await spans.invocation_spans(APP, USER, "s1", invocation)


def attribute(span: StoredSpan, name: str) -> Any:
    return json.loads(span.attributes[name])


async def test_each_chat_span_holds_the_request_sent_and_the_response(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CAPTURE_ENV, "true")
    found = await weather_spans()
    first, second, last = [s for s in found if s.operation == "chat"]

    assert attribute(first, "gen_ai.system_instructions") == [
        {"type": "text", "content": "Answer in one sentence."}
    ]
    assert attribute(first, "gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "Weather?"}]}
    ]
    tools = attribute(first, "gen_ai.tool.definitions")
    assert [(t["type"], t["name"]) for t in tools] == [
        ("function", "get_weather"),
        ("function", "get_forecast"),
    ]
    assert tools[0]["description"] == "Look up the weather."
    assert tools[0]["parameters"]["properties"]["city"]["type"] == "string"
    [called] = attribute(first, "gen_ai.output.messages")
    assert called["role"] == "assistant" and called["finish_reason"] == "stop"
    assert [(p["type"], p["name"], p["arguments"]) for p in called["parts"]] == [
        ("tool_call", "get_weather", {"city": "Hangzhou"})
    ]
    # The second call sends the tool's result back, as the role "tool".
    sent = attribute(second, "gen_ai.input.messages")
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[2]["parts"][0]["type"] == "tool_call_response"
    assert sent[2]["parts"][0]["response"] == {"city": "Hangzhou", "celsius": 23}
    [answer] = attribute(last, "gen_ai.output.messages")
    assert answer["parts"] == [{"type": "text", "content": "It is 23°C."}]
    assert last.attributes["gen_ai.response.finish_reasons"] == ["stop"]
    assert last.attributes["gen_ai.response.model"] == "scripted-1"
    tool = next(s for s in found if s.name == "execute_tool get_weather")
    assert attribute(tool, "gen_ai.tool.call.arguments") == {"city": "Hangzhou"}
    assert attribute(tool, "gen_ai.tool.call.result") == {"city": "Hangzhou", "celsius": 23}


async def test_without_capture_spans_hold_usage_but_no_content(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(CAPTURE_ENV, raising=False)
    found = await weather_spans()
    chat = next(s for s in found if s.operation == "chat")

    assert (chat.attributes["gen_ai.usage.input_tokens"], chat.output_tokens) == (11, 3)
    held = {key for span in found for key in span.attributes}
    assert not held & {
        "gen_ai.system_instructions",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.definitions",
        "gen_ai.tool.call.arguments",
    }
    assert "Weather?" not in json.dumps([s.attributes for s in found])


async def test_long_content_is_cut_with_a_marker_saying_how_much(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CAPTURE_ENV, "true")
    long = "x" * (MAX_STRING_CHARS + 1234)
    chat = next(s for s in await weather_spans(long) if s.operation == "chat")

    [message] = attribute(chat, "gen_ai.input.messages")
    text = message["parts"][0]["content"]
    assert text == "x" * MAX_STRING_CHARS + f"…[truncated 1234 of {len(long)} characters]"


async def test_settings_are_recorded_and_http_headers_never_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CAPTURE_ENV, "true")
    config = types.GenerateContentConfig(
        temperature=0.25,
        max_output_tokens=256,
        http_options=types.HttpOptions(headers={"x-goog-api-key": "sk-SECRET-123"}),
    )
    found = await weather_spans(generate_content_config=config)
    chat = next(s for s in found if s.operation == "chat")

    assert chat.attributes["gen_ai.request.temperature"] == 0.25
    assert chat.attributes["gen_ai.request.max_tokens"] == 256
    assert attribute(chat, "cairn.request.config") == {
        "temperature": 0.25,
        "max_output_tokens": 256,
    }
    recorded = json.dumps([[s.attributes, s.events] for s in found])
    assert "sk-SECRET-123" not in recorded and "x-goog-api-key" not in recorded


def test_a_long_conversation_keeps_its_newest_messages_and_says_how_many_are_left_out() -> None:
    said = [
        types.Content(role="user", parts=[types.Part(text=f"message {i}: " + "y" * 200)])
        for i in range(500)
    ]
    sent = json.loads(content.messages_json(said))

    marker, *kept = sent
    assert marker["role"] == content.OMITTED_ROLE
    left_out = 500 - len(kept)
    assert marker["parts"][0]["content"].startswith(f"…[{left_out} earlier messages not recorded")
    assert kept[-1]["parts"][0]["content"].startswith("message 499: ")
    assert kept[0]["parts"][0]["content"].startswith(f"message {left_out}: ")
    assert len(json.dumps(sent)) <= content.MAX_ATTRIBUTE_CHARS + 1_000
