"""Every RunConfig field of ADK's is accepted; those cairn implements change the run."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from google.genai import types

from cairn import Agent, InMemoryRunner, RunConfig, ToolContext
from cairn.agents import StreamingMode
from cairn.agents.run_config import ServiceTier, ToolThreadPoolConfig
from cairn.sessions import GetSessionConfig
from cairn.testing import Call, ScriptedLlm


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run(
    agent: Agent, config: RunConfig, text: str = "hi"
) -> tuple[InMemoryRunner, list[Any]]:
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await runner.session_service.create_session(
        app_name="app", user_id="u", session_id="s"
    )
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message=said(text), run_config=config
        )
    ]
    return runner, events


def test_adks_live_and_serving_fields_are_accepted() -> None:
    config = RunConfig(
        speech_config=types.SpeechConfig(language_code="en-US"),
        response_modalities=[types.Modality.TEXT],
        output_audio_transcription=types.AudioTranscriptionConfig(),
        realtime_input_config=types.RealtimeInputConfig(),
        enable_affective_dialog=True,
        proactivity=types.ProactivityConfig(proactive_audio=True),
        session_resumption=types.SessionResumptionConfig(),
        context_window_compression=types.ContextWindowCompressionConfig(),
        save_live_blob=True,
        support_cfc=False,
        service_tier="flex",
        tool_thread_pool_config=ToolThreadPoolConfig(max_workers=8),
        get_session_config=GetSessionConfig(num_recent_events=50),
        include_thoughts_from_other_agents=True,
        streaming_mode=StreamingMode.NONE,
    )
    assert config.service_tier == ServiceTier.FLEX
    with pytest.warns(DeprecationWarning):
        assert RunConfig(save_live_audio=True).save_live_blob
    with pytest.raises(ValueError, match="cannot be combined"):
        RunConfig(service_tier="deferred", streaming_mode=StreamingMode.SSE)
    with pytest.raises(ValueError, match="extra"):
        RunConfig(no_such_field=1)  # type: ignore[call-arg]


def test_max_llm_calls_defaults_from_adks_environment_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert RunConfig().max_llm_calls == 500
    monkeypatch.setenv("ADK_MAX_LLM_CALLS", "7")
    assert RunConfig().max_llm_calls == 7


async def test_max_llm_calls_zero_means_no_limit() -> None:
    def ping() -> str:
        return "pong"

    llm = ScriptedLlm(script=[Call("ping"), Call("ping"), "done"])
    _, events = await run(Agent(name="a", model=llm, tools=[ping]), RunConfig(max_llm_calls=0))
    assert events[-1].content.parts[0].text == "done"


async def test_custom_metadata_marks_every_event_and_is_shared_through_the_context() -> None:
    seen: list[dict[str, Any]] = []

    def note(tool_context: ToolContext) -> str:
        seen.append(dict(tool_context.custom_metadata))
        tool_context.custom_metadata["noted"] = True
        return "ok"

    def after(callback_context: Any) -> None:
        seen.append(dict(callback_context.custom_metadata))

    llm = ScriptedLlm(script=[Call("note"), "done"])
    agent = Agent(name="a", model=llm, tools=[note], after_agent_callback=after)
    runner, events = await run(agent, RunConfig(custom_metadata={"tenant": "acme"}))
    assert seen == [{"tenant": "acme"}, {"tenant": "acme", "noted": True}]
    assert events and all(e.custom_metadata == {"tenant": "acme"} for e in events)
    stored = await runner.session_service.get_session(app_name="app", user_id="u", session_id="s")
    assert stored is not None
    assert [e.custom_metadata for e in stored.events] == [{"tenant": "acme"}] * len(stored.events)
    assert stored.events[0].author == "user"


async def test_labels_headers_and_model_input_context_reach_the_request_only() -> None:
    llm = ScriptedLlm(script=["ok"])
    agent = Agent(
        name="a",
        model=llm,
        generate_content_config=types.GenerateContentConfig(
            labels={"team": "core"},
            http_options=types.HttpOptions(headers={"x-agent": "1"}),
        ),
    )
    context = types.Content(role="user", parts=[types.Part(text="Today is Monday.")])
    config = RunConfig(
        labels={"run": "r1"},
        http_options=types.HttpOptions(headers={"x-run": "2"}, timeout=5000),
        model_input_context=[context],
    )
    runner, _ = await run(agent, config, text="What day is it?")
    request = llm.requests[0]
    assert request.config.labels == {"team": "core", "run": "r1"}
    assert request.config.http_options is not None
    assert request.config.http_options.headers == {"x-agent": "1", "x-run": "2"}
    assert request.config.http_options.timeout == 5000
    texts = [c.parts[0].text for c in request.contents if c.parts]
    assert texts[-2:] == ["Today is Monday.", "What day is it?"]
    stored = await runner.session_service.get_session(app_name="app", user_id="u", session_id="s")
    assert stored is not None
    assert "Today is Monday." not in str([e.content for e in stored.events])


def test_adks_max_llm_calls_check_is_callable_on_the_class() -> None:
    assert RunConfig.validate_max_llm_calls(100) == 100
    assert RunConfig.validate_max_llm_calls(0) == 0  # no limit, with a warning
    with pytest.raises(ValueError, match="max_llm_calls should be less than"):
        RunConfig.validate_max_llm_calls(sys.maxsize)
