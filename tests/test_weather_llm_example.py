"""The LLM weather example on a scripted model: seed 1's s1/s2 state visibility."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from google.genai import types

from cairn import App, InMemoryRunner
from cairn.testing import Call, ScriptedLlm

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "weather" / "llm_agent.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("weather_llm_agent", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def test_weather_agent_shares_the_unit_but_not_the_city() -> None:
    example = load_example()
    llm = ScriptedLlm(
        script=[
            [Call("set_temperature_unit", unit="C"), Call("get_weather", city="Hangzhou")],
            "23°C in Hangzhou.",
            Call("get_weather", city="Beijing"),
            "12°C in Beijing.",
        ]
    )
    runner = InMemoryRunner(app=App(name="weather", root_agent=example.build_agent(llm)))
    service = runner.session_service
    for session_id in ("s1", "s2"):
        await service.create_session(app_name="weather", user_id="u1", session_id=session_id)

    s1_events = [
        e
        async for e in runner.run_async(
            user_id="u1", session_id="s1", new_message=said("Hangzhou weather? Use Celsius.")
        )
    ]
    tool_result = s1_events[1]
    assert tool_result.actions.state_delta["temp:lookup_attempt"] == 1  # the caller sees it
    s1 = await service.get_session(app_name="weather", user_id="u1", session_id="s1")
    assert s1 is not None
    assert s1.state == {
        "user:temperature_unit": "C",
        "app:weather_provider": "provider-a",
        "last_city": "hangzhou",
    }

    s2 = await service.get_session(app_name="weather", user_id="u1", session_id="s2")
    assert s2 is not None
    assert s2.state == {"user:temperature_unit": "C", "app:weather_provider": "provider-a"}
    async for _ in runner.run_async(
        user_id="u1", session_id="s2", new_message=said("And Beijing?")
    ):
        pass
    # s2's prompt knew the unit (user: state) but not s1's city.
    s2_prompt = llm.requests[2].system_instruction_text
    assert "Preferred unit: C" in s2_prompt and "Last city asked: ." in s2_prompt
    s2 = await service.get_session(app_name="weather", user_id="u1", session_id="s2")
    assert s2 is not None and s2.state["last_city"] == "beijing"
    assert all(not k.startswith("temp:") for k in s2.state)


def test_the_example_resolves_its_model_from_the_environment(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("CAIRN_MODEL", "anthropic/claude-sonnet-4-5")
    example = load_example()
    assert example.root_agent.model == "anthropic/claude-sonnet-4-5"
