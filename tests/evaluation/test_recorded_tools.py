"""RecordedToolsPlugin on real runs: while the agent makes the recorded calls, their recorded
results come back and the tool bodies do not run; from the first other call, the live
tools run and the plugin says where the run diverged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.evaluation.session_runs import CALLS_FILE, CONFIRMED, Answer, clerk, drive, tool_runs

from cairn.evaluation.divergence import Divergence, DivergenceKind
from cairn.evaluation.eval_case import EvalCase, Invocation
from cairn.evaluation.recorded_tools import RecordedToolsPlugin
from cairn.evaluation.session_cases import eval_case_from_session
from cairn.runners import Runner
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.testing import Call, ScriptedLlm

WEATHER_TWICE_THEN_NOTE: list[Any] = [
    Call("get_weather", city="Paris"),
    Call("get_weather", city="Rome"),
    "Sunny in Paris, rain in Rome.",
    Call("note", text="umbrella"),
    "Noted.",
]
TURNS: list[str | Answer] = ["weather in Paris and Rome?", "remember the umbrella"]


async def _run(
    directory: Path,
    turns: list[str | Answer],
    *,
    script: list[Any] | None = None,
    plugin: RecordedToolsPlugin | None = None,
) -> tuple[EvalCase, ScriptedLlm]:
    model = ScriptedLlm(script=script) if script is not None else None
    agent = clerk(directory, model=model)
    service = InMemorySessionService()
    runner = Runner(
        app_name="shop",
        agent=agent,
        session_service=service,
        plugins=[plugin] if plugin is not None else [],
    )
    session = await service.create_session(app_name="shop", user_id="ann")
    await drive(runner, "ann", session.id, turns)
    stored = await service.get_session(app_name="shop", user_id="ann", session_id=session.id)
    assert stored is not None
    used = agent.model
    assert isinstance(used, ScriptedLlm)
    return eval_case_from_session(stored), used


async def _recorded(directory: Path, turns: list[str | Answer], **kwargs: Any) -> list[Invocation]:
    case, _ = await _run(directory, turns, **kwargs)
    (directory / CALLS_FILE).unlink(missing_ok=True)  # the replay's runs are counted afresh
    assert case.conversation is not None
    return case.conversation


def _responses_shown(model: ScriptedLlm) -> list[dict[str, Any] | None]:
    return [
        part.function_response.response
        for request in model.requests
        for part in request.contents[-1].parts or []
        if part.function_response is not None
    ]


async def test_replaying_the_recorded_calls_reuses_every_result(tmp_path: Path) -> None:
    expected = await _recorded(tmp_path, TURNS, script=WEATHER_TWICE_THEN_NOTE)
    plugin = RecordedToolsPlugin(expected)
    _, model = await _run(tmp_path, TURNS, script=WEATHER_TWICE_THEN_NOTE, plugin=plugin)
    assert tool_runs(tmp_path) == []  # no tool body ran
    assert plugin.reused_calls == 3 and plugin.divergence is None
    # The model was shown the recorded results, in the shape the tools return them.
    assert _responses_shown(model) == [
        {"city": "Paris", "sky": "sunny"},
        {"city": "Rome", "sky": "rain"},
        {"noted": "umbrella"},
    ]


async def test_from_the_first_other_call_the_live_tools_run(tmp_path: Path) -> None:
    expected = await _recorded(tmp_path, TURNS, script=WEATHER_TWICE_THEN_NOTE)
    changed = list(WEATHER_TWICE_THEN_NOTE)
    changed[1] = Call("get_weather", city="Lyon")
    plugin = RecordedToolsPlugin(expected)
    _, model = await _run(tmp_path, TURNS, script=changed, plugin=plugin)
    assert plugin.reused_calls == 1
    # The note call is the recorded one again, but the trajectory diverged before it.
    assert tool_runs(tmp_path) == ["get_weather:Lyon", "note:umbrella"]
    assert plugin.divergence == Divergence(
        invocation_index=0,
        event_index=2,  # call Paris, its response, call Rome
        kind=DivergenceKind.TOOL_CALL,
        expected="get_weather(city='Rome')",
        actual="get_weather(city='Lyon')",
    )
    assert _responses_shown(model)[1] == {"city": "Lyon", "sky": "rain"}


async def test_a_call_beyond_the_recorded_ones_runs_live(tmp_path: Path) -> None:
    expected = await _recorded(tmp_path, TURNS[:1], script=WEATHER_TWICE_THEN_NOTE[:3])
    more = [*WEATHER_TWICE_THEN_NOTE[:2], Call("get_weather", city="Oslo"), "Three cities."]
    plugin = RecordedToolsPlugin(expected)
    await _run(tmp_path, TURNS[:1], script=more, plugin=plugin)
    assert plugin.reused_calls == 2 and tool_runs(tmp_path) == ["get_weather:Oslo"]
    assert plugin.divergence == Divergence(
        invocation_index=0,
        event_index=None,
        kind=DivergenceKind.EXTRA_TOOL_CALL,
        expected="no more tool calls",
        actual="get_weather(city='Oslo')",
    )


async def test_a_recorded_call_without_a_result_runs_live_and_keeps_matching(
    tmp_path: Path,
) -> None:
    # A long-running tool returns nothing: the user's answer is the next turn, not a result.
    turns: list[str | Answer] = ["ask may I?", Answer("ask_manager", {"ok": True}), "weather Rome"]
    expected = await _recorded(tmp_path, turns)
    plugin = RecordedToolsPlugin(expected)
    await _run(tmp_path, turns, plugin=plugin)
    assert tool_runs(tmp_path) == ["ask_manager:may I?"]
    assert plugin.reused_calls == 1 and plugin.divergence is None


async def test_a_call_waiting_for_confirmation_when_recorded_asks_again_and_runs_once(
    tmp_path: Path,
) -> None:
    # Recorded while it waited: its only response is the placeholder, which is no result.
    expected = await _recorded(tmp_path, ["refund 5"])
    plugin = RecordedToolsPlugin(expected)
    await _run(tmp_path, ["refund 5", CONFIRMED], plugin=plugin)
    # The approved call runs again under the same id: it is not a second call.
    assert tool_runs(tmp_path) == ["refund:5"]
    assert plugin.reused_calls == 0 and plugin.divergence is None


async def test_an_approved_call_asks_again_and_reuses_its_result(tmp_path: Path) -> None:
    expected = await _recorded(tmp_path, ["refund 5", CONFIRMED])
    plugin = RecordedToolsPlugin(expected)
    # The replay pauses where the recording did; the recorded approval answers it.
    case, model = await _run(tmp_path, ["refund 5", CONFIRMED], plugin=plugin)
    assert tool_runs(tmp_path) == [] and plugin.reused_calls == 1
    assert plugin.divergence is None
    assert {"refunded": 5} in _responses_shown(model)
    assert case.conversation is not None and len(case.conversation) == len(expected) == 2
