"""Running eval cases: the generator, LocalEvalService, AgentEvaluator (the pytest helper).

The agents run on cairn.testing.ScriptedLlm models whose replies are computed from the
request, so each run (and each concurrent case) behaves the same.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from cairn import Agent
from cairn.evaluation.agent_evaluator import AgentEvaluator
from cairn.evaluation.base_eval_service import (
    EvaluateConfig,
    EvaluateRequest,
    InferenceConfig,
    InferenceRequest,
    InferenceResult,
    InferenceStatus,
)
from cairn.evaluation.eval_case import (
    EvalCase,
    IntermediateData,
    Invocation,
    SessionInput,
    get_all_tool_calls,
)
from cairn.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
from cairn.evaluation.eval_result import EvalCaseResult
from cairn.evaluation.evaluation_generator import EvaluationGenerator, _events_for
from cairn.evaluation.evaluator import EvalStatus
from cairn.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from cairn.evaluation.local_eval_service import LocalEvalService
from cairn.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager
from cairn.evaluation.simulation.static_user_simulator import StaticUserSimulator
from cairn.evaluation.simulation.user_simulator import NextUserMessage
from cairn.events.event import Event
from cairn.models.llm_request import LlmRequest
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.sqlite_session_service import SqliteSessionService
from cairn.testing import Call, ScriptedLlm
from cairn.tools import LongRunningFunctionTool, ToolContext

ROOT = Path(__file__).resolve().parents[2]
ADK_PYTHON = ROOT / "bench" / ".peers" / "adk" / "bin" / "python"
APP = "weather_app"


def said(text: str, role: str = "user") -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=text)])


def last_part(request: LlmRequest) -> types.Part:
    parts = request.contents[-1].parts or []
    return parts[-1]


def weather_reply(request: LlmRequest) -> Any:
    part = last_part(request)
    if part.function_response is not None:
        result = part.function_response.response or {}
        return f"It is {result['celsius']} degrees in {result['city']}."
    city = (part.text or "").rsplit(" ", 1)[-1].strip("?")
    return Call("get_weather", city=city)


class Counter:
    def __init__(self) -> None:
        self.calls: list[str] = []


def weather_agent(counter: Counter | None = None, *, degrees: int = 20) -> Agent:
    def get_weather(city: str) -> dict[str, Any]:
        """The temperature in a city."""
        if counter is not None:
            counter.calls.append(city)
        return {"city": city, "celsius": degrees}

    return Agent(
        name="weather_agent",
        model=ScriptedLlm(respond=weather_reply),
        instruction="Answer weather questions with get_weather.",
        tools=[get_weather],
    )


def expected_turn(city: str, response: str | None = None) -> Invocation:
    return Invocation(
        user_content=said(f"Weather in {city}?"),
        final_response=said(response or f"It is 20 degrees in {city}.", "model"),
        intermediate_data=IntermediateData(
            tool_uses=[types.FunctionCall(name="get_weather", args={"city": city})]
        ),
    )


def weather_case(eval_id: str, *cities: str) -> EvalCase:
    return EvalCase(
        eval_id=eval_id,
        conversation=[expected_turn(city) for city in cities],
        session_input=SessionInput(app_name=APP, user_id="u1", state={"tier": "gold"}),
    )


CONFIG = EvalConfig(criteria={"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8})


def sets_with(*cases: EvalCase, eval_set_id: str = "weather_set") -> InMemoryEvalSetsManager:
    sets = InMemoryEvalSetsManager()
    sets.create_eval_set(app_name=APP, eval_set_id=eval_set_id)
    for case in cases:
        sets.add_eval_case(app_name=APP, eval_set_id=eval_set_id, eval_case=case)
    return sets


async def run_all(
    service: LocalEvalService, *, parallelism: int = 4, config: EvalConfig = CONFIG
) -> tuple[list[InferenceResult], list[EvalCaseResult]]:
    request = InferenceRequest(
        app_name=APP,
        eval_set_id="weather_set",
        inference_config=InferenceConfig(parallelism=parallelism),
    )
    inferences = [result async for result in service.perform_inference(request)]
    evaluate = EvaluateRequest(
        inference_results=inferences,
        evaluate_config=EvaluateConfig(eval_metrics=get_eval_metrics_from_config(config)),
    )
    return inferences, [result async for result in service.evaluate(evaluate)]


async def test_the_generator_turns_each_user_turn_into_an_invocation() -> None:
    counter = Counter()
    case = weather_case("two_cities", "Paris", "Lima")
    invocations = await EvaluationGenerator._generate_inferences_from_root_agent(
        weather_agent(counter),
        user_simulator=StaticUserSimulator(static_conversation=case.conversation or []),
        initial_session=case.session_input,
    )
    assert [i.user_content.parts[0].text for i in invocations] == [
        "Weather in Paris?",
        "Weather in Lima?",
    ]
    assert [[c.args for c in get_all_tool_calls(i.intermediate_data)] for i in invocations] == [
        [{"city": "Paris"}],
        [{"city": "Lima"}],
    ]
    assert [i.final_response.parts[0].text for i in invocations if i.final_response] == [
        "It is 20 degrees in Paris.",
        "It is 20 degrees in Lima.",
    ]
    assert counter.calls == ["Paris", "Lima"]
    first = invocations[0]
    # What the agent was shown is recorded for the judge metrics, and the run was timed.
    details = first.app_details.agent_details["weather_agent"] if first.app_details else None
    assert details is not None and "get_weather" in details.instructions + str(
        details.tool_declarations
    )
    assert first.duration is not None and first.duration >= (first.model_duration or 0)


async def test_a_tool_holding_a_client_runs_and_each_agent_s_first_request_is_recorded() -> None:
    # A tool that is a method of an object holding a connection (here a lock, which cannot
    # be copied): the run keeps what the evaluator needs from the agent's first model call
    # (its instructions and declarations), not a copy of the request and its tool objects.
    class WeatherClient:
        def __init__(self) -> None:
            self.connection = threading.Lock()

        def get_weather(self, city: str) -> dict[str, Any]:
            """The temperature in a city."""
            with self.connection:
                return {"city": city, "celsius": 20}

    agent = weather_agent()
    agent.tools = [WeatherClient().get_weather]
    case = weather_case("client", "Paris", "Lima")
    invocations = await EvaluationGenerator._generate_inferences_from_root_agent(
        agent,
        user_simulator=StaticUserSimulator(static_conversation=case.conversation or []),
        initial_session=case.session_input,
    )
    assert [i.final_response.parts[0].text for i in invocations if i.final_response] == [
        "It is 20 degrees in Paris.",
        "It is 20 degrees in Lima.",
    ]
    for invocation in invocations:
        assert invocation.app_details is not None
        details = invocation.app_details.agent_details["weather_agent"]
        assert details.instructions == "Answer weather questions with get_weather."
        declared = details.tool_declarations[0].function_declarations[0]
        assert declared.name == "get_weather"
        assert declared.parameters_json_schema["required"] == ["city"]


async def test_a_simulator_reading_the_events_gets_copies_the_static_one_the_run_s() -> None:
    case = weather_case("two_cities", "Paris", "Lima")
    turns = case.conversation or []

    class Scribbler(StaticUserSimulator):
        """Replays the turns, but first defaces every event it is shown."""

        async def get_next_user_message(self, events: list[Event]) -> NextUserMessage:
            for event in events:
                for part in (event.content.parts or []) if event.content else []:
                    if part.text:
                        part.text = "scribbled"
            return await super().get_next_user_message(events)

    invocations = await EvaluationGenerator._generate_inferences_from_root_agent(
        weather_agent(),
        user_simulator=Scribbler(static_conversation=turns),
        initial_session=case.session_input,
    )
    # What it changed were copies: the run's own events, and so the invocations, are intact.
    assert [i.final_response.parts[0].text for i in invocations if i.final_response] == [
        "It is 20 degrees in Paris.",
        "It is 20 degrees in Lima.",
    ]
    # The static simulator never reads them: it is shown the run's events, uncopied.
    events = [Event(author="user", content=said("Weather in Paris?"))]
    assert _events_for(StaticUserSimulator(static_conversation=turns), events) is events
    copied = _events_for(Scribbler(static_conversation=turns), events)
    assert copied == events and copied[0] is not events[0]


async def test_a_passing_and_a_failing_case_are_scored_as_adk_scores_them() -> None:
    good = weather_case("good", "Paris")
    wrong = EvalCase(
        eval_id="wrong_city",
        conversation=[expected_turn("Lima", "Lima is hot today: 31 degrees.")],
        session_input=SessionInput(app_name=APP, user_id="u1"),
    )
    # The agent calls the tool as expected, but answers in other words.
    service = LocalEvalService(root_agent=weather_agent(), eval_sets_manager=sets_with(good, wrong))
    _, results = await run_all(service)
    by_id = {r.eval_id: r for r in results}
    assert by_id["good"].final_eval_status == EvalStatus.PASSED
    assert by_id["wrong_city"].final_eval_status == EvalStatus.FAILED
    scores = {m.metric_name: m for m in by_id["wrong_city"].overall_eval_metric_results}
    assert scores["tool_trajectory_avg_score"].score == 1.0
    assert scores["tool_trajectory_avg_score"].eval_status == EvalStatus.PASSED
    # ROUGE-1 F1 of "It is 20 degrees in Lima." against "Lima is hot today: 31 degrees.":
    # 6 tokens each, 3 shared (lima, is, degrees) -> precision = recall = F1 = 0.5 < 0.8.
    assert scores["response_match_score"].score == pytest.approx(0.5)
    assert scores["response_match_score"].eval_status == EvalStatus.FAILED
    # The efficiency metrics are reported but never decide a case.
    assert scores["tool_call_count_v1"].eval_status == EvalStatus.INFORMATIONAL


async def test_cases_run_concurrently_each_on_its_own_session() -> None:
    arrived = 0
    all_in = asyncio.Event()

    async def slow_weather(city: str) -> dict[str, Any]:
        """The temperature in a city (waits until every case is inside its tool)."""
        nonlocal arrived
        arrived += 1
        if arrived == 3:
            all_in.set()
        await asyncio.wait_for(all_in.wait(), timeout=60)
        return {"city": city, "celsius": 20}

    agent = Agent(
        name="weather_agent",
        model=ScriptedLlm(respond=weather_reply),
        tools=[slow_weather],
    )

    def reply(request: LlmRequest) -> Any:
        answer = weather_reply(request)
        return Call("slow_weather", **answer.args) if isinstance(answer, Call) else answer

    agent.model = ScriptedLlm(respond=reply)
    cases = [weather_case(f"case_{n}", city) for n, city in enumerate(["Paris", "Lima", "Oslo"])]
    for case in cases:
        for turn in case.conversation or []:
            assert isinstance(turn.intermediate_data, IntermediateData)
            turn.intermediate_data.tool_uses[0].name = "slow_weather"
    service = LocalEvalService(root_agent=agent, eval_sets_manager=sets_with(*cases))
    # Three cases that each wait for the other two finish only if they run at once.
    inferences, results = await run_all(service, parallelism=3)
    assert all(i.status == InferenceStatus.SUCCESS for i in inferences)
    assert len({i.session_id for i in inferences}) == 3
    assert {r.final_eval_status for r in results} == {EvalStatus.PASSED}


async def test_a_case_whose_run_raises_fails_alone() -> None:
    def reply(request: LlmRequest) -> Any:
        if "Atlantis" in (last_part(request).text or ""):
            raise RuntimeError("the provider is down")
        return weather_reply(request)

    agent = weather_agent()
    agent.model = ScriptedLlm(respond=reply)
    cases = [weather_case("ok", "Paris"), weather_case("broken", "Atlantis")]
    service = LocalEvalService(root_agent=agent, eval_sets_manager=sets_with(*cases))
    inferences, results = await run_all(service)
    failed = next(i for i in inferences if i.eval_case_id == "broken")
    assert failed.status == InferenceStatus.FAILURE
    assert "the provider is down" in (failed.error_message or "")
    by_id = {r.eval_id: r.final_eval_status for r in results}
    assert by_id == {"ok": EvalStatus.PASSED, "broken": EvalStatus.FAILED}


async def test_a_pause_is_answered_from_the_recorded_turn(tmp_path: Path) -> None:
    """A recorded answer to a long-running tool carries the recording's call id; the run
    answers the call it is waiting on, whatever its new id, and continues."""

    def ask_approval(amount: int, tool_context: ToolContext) -> dict[str, Any]:
        """Ask a manager to approve a refund."""
        return {"status": "waiting for a manager"}

    def reply(request: LlmRequest) -> Any:
        part = last_part(request)
        if part.function_response is not None:
            answer = part.function_response.response or {}
            if answer.get("status") == "waiting for a manager":
                return "I asked a manager."
            return f"Refund {answer.get('decision')}."
        return Call("ask_approval", amount=40)

    agent = Agent(
        name="refunds",
        model=ScriptedLlm(respond=reply),
        tools=[LongRunningFunctionTool(func=ask_approval)],
    )
    recorded_answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id="call-from-the-recording",
                    name="ask_approval",
                    response={"decision": "approved"},
                )
            )
        ],
    )
    case = EvalCase(
        eval_id="refund",
        conversation=[
            Invocation(
                user_content=said("Refund my 40 euros"),
                final_response=said("I asked a manager.", "model"),
                intermediate_data=IntermediateData(
                    tool_uses=[types.FunctionCall(name="ask_approval", args={"amount": 40})]
                ),
            ),
            Invocation(
                user_content=recorded_answer, final_response=said("Refund approved.", "model")
            ),
        ],
        session_input=SessionInput(app_name=APP, user_id="u1"),
    )
    store = SqliteSessionService(str(tmp_path / "eval.db"))
    try:
        service = LocalEvalService(
            root_agent=agent, eval_sets_manager=sets_with(case), session_service=store
        )
        inferences, results = await run_all(service)
        (inference,) = inferences
        assert inference.status == InferenceStatus.SUCCESS, inference.error_message
        actual = inference.inferences or []
        assert [i.final_response.parts[0].text for i in actual if i.final_response] == [
            "I asked a manager.",
            "Refund approved.",
        ]
        assert results[0].final_eval_status == EvalStatus.PASSED
        # The case's session is kept in the store given, answer included.
        session = await store.get_session(
            app_name=APP, user_id="u1", session_id=inference.session_id or ""
        )
        assert session is not None
        answers = [
            r for e in session.events for r in e.get_function_responses() if e.author == "user"
        ]
        assert [a.response for a in answers] == [{"decision": "approved"}]
        assert answers[0].id != "call-from-the-recording"
        assert results[0].session_details is not None
    finally:
        await store.close()


async def test_results_are_saved_as_adks_result_json(tmp_path: Path) -> None:
    service = LocalEvalService(
        root_agent=weather_agent(),
        eval_sets_manager=sets_with(weather_case("good", "Paris")),
        eval_set_results_manager=LocalEvalSetResultsManager(agents_dir=str(tmp_path)),
    )
    await run_all(service)
    (saved,) = list((tmp_path / APP / ".adk" / "eval_history").glob("*.evalset_result.json"))
    data = json.loads(saved.read_text())
    assert data["eval_set_id"] == "weather_set"
    assert data["eval_case_results"][0]["final_eval_status"] == EvalStatus.PASSED.value
    if not ADK_PYTHON.exists():
        pytest.skip("google-adk's venv is missing; make it with bench/peers.py")
    reread = subprocess.run(
        [str(ADK_PYTHON), str(Path(__file__).with_name("adk_roundtrip.py"))],
        input=json.dumps(
            {"model": "EvalSetResult", "json": json.dumps(data), "dump": {"by_alias": True}}
        ),
        capture_output=True,
        text=True,
    )
    assert reread.returncode == 0, reread.stderr
    assert json.loads(reread.stdout)["evalCaseResults"][0]["evalId"] == "good"


def write_agent_module(tmp_path: Path, degrees: int, city_case: str = "") -> str:
    """A package whose agent answers from get_weather (the city as asked, or lowercased)."""
    package = tmp_path / f"weather_pkg_{degrees}{'_lower' if city_case else ''}"
    package.mkdir()
    (package / "__init__.py").write_text("from . import agent\n")
    (package / "agent.py").write_text(
        "from cairn import Agent\n"
        "from cairn.testing import Call, ScriptedLlm\n\n"
        "def get_weather(city: str) -> dict:\n"
        "    '''The temperature in a city.'''\n"
        f"    return {{'city': city, 'celsius': {degrees}}}\n\n"
        "def reply(request):\n"
        "    part = request.contents[-1].parts[-1]\n"
        "    if part.function_response is not None:\n"
        "        r = part.function_response.response\n"
        "        return f\"It is {r['celsius']} degrees in {r['city']}.\"\n"
        "    city = part.text.rsplit(' ', 1)[-1].strip('?')\n"
        f"    return Call('get_weather', city=city{city_case})\n\n"
        "root_agent = Agent(name='weather_agent', model=ScriptedLlm(respond=reply), "
        "tools=[get_weather])\n"
    )
    return package.name


def write_test_file(tmp_path: Path) -> Path:
    data = [
        {
            "query": "Weather in Paris?",
            "expected_tool_use": [{"tool_name": "get_weather", "tool_input": {"city": "Paris"}}],
            "reference": "It is 20 degrees in Paris.",
        }
    ]
    path = tmp_path / "evals" / "paris.test.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    return path


async def test_agent_evaluator_passes_a_good_agent_and_lists_a_bad_ones_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    test_file = write_test_file(tmp_path)
    good = write_agent_module(tmp_path, degrees=20)
    await AgentEvaluator.evaluate(good, str(test_file), num_runs=2, print_detailed_results=False)
    # Asks for "paris": the trajectory (exact arguments) fails; the answer's ROUGE-1 does not
    # (the tokenizer lowercases).
    bad = write_agent_module(tmp_path, degrees=20, city_case=".lower()")
    with pytest.raises(AssertionError) as failure:
        await AgentEvaluator.evaluate(bad, str(test_file.parent), print_detailed_results=False)
    message = str(failure.value)
    assert f"tool_trajectory_avg_score for {bad} Failed. Expected 1.0, but got 0.0." in message
    assert "response_match_score" not in message


async def test_without_a_store_cases_do_not_share_user_state() -> None:
    """Each case's in-memory store is its own: a user: preference one case sets is not seen
    by the next case of the same user (in a shared store it would be, as in production)."""

    def remember(word: str, tool_context: ToolContext) -> dict[str, Any]:
        """Remember a word for the user; says the word remembered before."""
        before = tool_context.state.get("user:word", "nothing")
        tool_context.state["user:word"] = word
        return {"before": before}

    def reply(request: LlmRequest) -> Any:
        part = last_part(request)
        if part.function_response is not None:
            return f"before: {(part.function_response.response or {})['before']}"
        return Call("remember", word=(part.text or "").split()[-1])

    agent = Agent(name="memo", model=ScriptedLlm(respond=reply), tools=[remember])

    def case(eval_id: str, word: str) -> EvalCase:
        return EvalCase(
            eval_id=eval_id,
            conversation=[
                Invocation(
                    user_content=said(f"remember {word}"),
                    final_response=said("before: nothing", "model"),
                )
            ],
            session_input=SessionInput(app_name=APP, user_id="same_user"),
        )

    config = EvalConfig(criteria={"response_match_score": 1.0})
    isolated = LocalEvalService(
        root_agent=agent, eval_sets_manager=sets_with(case("a", "tea"), case("b", "cake"))
    )
    _, results = await run_all(isolated, parallelism=1, config=config)
    assert {r.eval_id: r.final_eval_status for r in results} == {
        "a": EvalStatus.PASSED,
        "b": EvalStatus.PASSED,
    }
    assert all(r.session_details is not None for r in results)
    shared = LocalEvalService(
        root_agent=agent,
        eval_sets_manager=sets_with(case("a", "tea"), case("b", "cake")),
        session_service=InMemorySessionService(),
    )
    _, results = await run_all(shared, parallelism=1, config=config)
    # In one store, the second case of the user sees what the first remembered.
    assert sorted(r.final_eval_status.name for r in results) == ["FAILED", "PASSED"]
