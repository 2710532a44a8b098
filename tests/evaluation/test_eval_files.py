"""ADK's eval files load unchanged, and what cairn writes is ADK's JSON.

The fixtures in data/ are written for these tests in ADK's formats: an eval set with both
shapes of intermediate data, a legacy ``*.test.json`` list of turns, and a test_config.json
with a bare threshold and a criterion object.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from cairn.errors import NotFoundError
from cairn.evaluation.errors import EvalFileError
from cairn.evaluation.eval_case import (
    EvalCase,
    IntermediateData,
    Invocation,
    InvocationEvents,
    get_all_tool_calls,
    get_all_tool_calls_with_responses,
    get_all_tool_responses,
)
from cairn.evaluation.eval_config import (
    EvalConfig,
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)
from cairn.evaluation.eval_metrics import (
    BaseCriterion,
    EvalMetricResult,
    EvalMetricResultPerInvocation,
    EvalStatus,
    ToolTrajectoryCriterion,
)
from cairn.evaluation.eval_result import EvalCaseResult, EvalSetResult
from cairn.evaluation.eval_set import EvalSet
from cairn.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from cairn.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager
from cairn.evaluation.local_eval_sets_manager import (
    LocalEvalSetsManager,
    load_eval_set_from_file,
    load_test_file,
)

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parents[2]
ADK_PYTHON = ROOT / "bench" / ".peers" / "adk" / "bin" / "python"
EFFICIENCY = [
    "tool_call_count_v1",
    "inference_call_count_v1",
    "token_usage_v1",
    "invocation_duration_v1",
]


def weather_set() -> EvalSet:
    return load_eval_set_from_file(str(DATA / "weather.evalset.json"), "weather_set")


def said(text: str, role: str = "user") -> types.Content:
    return types.Content(role=role, parts=[types.Part.from_text(text=text)])


def case(eval_id: str, *queries: str) -> EvalCase:
    return EvalCase(
        eval_id=eval_id, conversation=[Invocation(user_content=said(q)) for q in queries]
    )


# --- eval set files -------------------------------------------------------------------------


def test_an_adk_eval_set_file_loads_with_both_shapes_of_intermediate_data() -> None:
    eval_set = weather_set()
    assert (eval_set.eval_set_id, eval_set.name) == ("weather_set", "Weather questions")
    first, second = eval_set.eval_cases
    lists = first.conversation[0].intermediate_data  # type: ignore[index]
    assert isinstance(lists, IntermediateData)
    assert [(c.name, c.args) for c in get_all_tool_calls(lists)] == [
        ("geocode", {"city": "Oslo"}),
        ("forecast", {"lat": 59.91, "lon": 10.75}),
    ]
    assert lists.intermediate_responses[0][0] == "router"
    assert lists.intermediate_responses[0][1][0].text == "Handing over to the weather agent."
    assert first.session_input is not None
    assert first.session_input.state == {"units": "metric"}

    events = second.conversation[0].intermediate_data  # type: ignore[index]
    assert isinstance(events, InvocationEvents)
    assert [c.name for c in get_all_tool_calls(events)] == ["forecast", "wind"]
    assert [r.response for r in get_all_tool_responses(events)] == [{"celsius": 22}]
    pairs = get_all_tool_calls_with_responses(events)
    assert [(c.id, r.response if r else None) for c, r in pairs] == [
        ("c-9", {"celsius": 22}),
        ("c-10", None),
    ]
    assert second.final_session_state == {"last_city": "Lima"}


def test_the_lists_shape_pairs_calls_and_responses_by_id() -> None:
    lists = weather_set().eval_cases[0].conversation[0].intermediate_data  # type: ignore[index]
    pairs = get_all_tool_calls_with_responses(lists)
    assert [(c.name, r.response if r else None) for c, r in pairs] == [
        ("geocode", {"lat": 59.91, "lon": 10.75}),
        ("forecast", {"celsius": 4, "sky": "rain"}),
    ]
    assert get_all_tool_calls(None) == [] and get_all_tool_responses(None) == []


def test_an_invocation_without_tools_has_no_tool_calls() -> None:
    invocation = weather_set().eval_cases[0].conversation[1]  # type: ignore[index]
    assert get_all_tool_calls(invocation.intermediate_data) == []
    assert get_all_tool_calls_with_responses(invocation.intermediate_data) == []


def test_camel_case_json_round_trips_to_the_same_json() -> None:
    eval_set = weather_set()
    camel = eval_set.model_dump_json(by_alias=True, exclude_none=True)
    assert '"evalId":"forecast_then_thanks"' in camel
    assert '"userContent"' in camel and '"intermediateData"' in camel
    again = EvalSet.model_validate_json(camel)
    assert again == eval_set
    assert again.model_dump_json(by_alias=True, exclude_none=True) == camel


def test_a_case_needs_exactly_one_of_conversation_and_scenario() -> None:
    with pytest.raises(ValueError, match="exactly one of `conversation`"):
        EvalCase(eval_id="neither")
    scenario = {"starting_prompt": "Hi", "conversation_plan": "Ask for the weather."}
    with pytest.raises(ValueError, match="exactly one of `conversation`"):
        EvalCase.model_validate(
            {"eval_id": "both", "conversation": [], "conversation_scenario": scenario}
        )
    simulated = EvalCase.model_validate({"evalId": "sim", "conversationScenario": scenario})
    assert simulated.conversation_scenario is not None
    assert simulated.conversation_scenario.conversation_plan == "Ask for the weather."


def test_a_legacy_test_file_becomes_one_case_named_by_its_path() -> None:
    path = str(DATA / "trip.test.json")
    eval_set = load_test_file(path, {"app_name": "trip", "user_id": "u1", "state": {"a": 1}})
    [only] = eval_set.eval_cases
    assert only.eval_id == path
    assert only.session_input is not None
    assert (only.session_input.app_name, only.session_input.state) == ("trip", {"a": 1})
    first, second = only.conversation  # type: ignore[misc]
    assert first.user_content.parts[0].text == "Book me a table for two tonight."  # type: ignore[index]
    assert first.final_response.parts[0].text == "I booked a table for two at 8pm."  # type: ignore[union-attr,index]
    assert [(c.name, c.args) for c in get_all_tool_calls(first.intermediate_data)] == [
        ("find_restaurant", {"party": 2, "when": "tonight"}),
        ("book", {"restaurant_id": "r-7"}),
    ]
    assert isinstance(first.intermediate_data, IntermediateData)
    assert first.intermediate_data.intermediate_responses[0][0] == "concierge"
    assert get_all_tool_calls(second.intermediate_data) == []
    assert second.final_response.parts[0].text == "Enjoy your dinner!"  # type: ignore[union-attr,index]


def test_an_initial_session_is_refused_for_an_eval_set_file() -> None:
    path = str(DATA / "weather.evalset.json")
    assert load_test_file(path) == weather_set()
    with pytest.raises(ValueError, match="session_input"):
        load_test_file(path, {"app_name": "weather_agent", "user_id": "u"})


def test_the_older_list_of_cases_format_loads_too(tmp_path: Path) -> None:
    older = [
        {
            "name": "roll",
            "data": [{"query": "Roll a d6", "expected_tool_use": [], "reference": "4"}],
            "initial_session": {"app_name": "dice", "user_id": "u", "state": {}},
        }
    ]
    path = tmp_path / "dice.evalset.json"
    path.write_text(json.dumps(older))
    eval_set = load_eval_set_from_file(str(path), "dice")
    assert eval_set.eval_set_id == "dice"
    assert [c.eval_id for c in eval_set.eval_cases] == ["roll"]
    assert eval_set.eval_cases[0].session_input.app_name == "dice"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("content", "field"),
    [
        (
            '{"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": [{}]}]}',
            "eval_cases[0].conversation[0].user_content",
        ),
        ('{"eval_cases": []}', "eval_set_id"),
        (
            '[{"query": "hi", "expected_tool_use": [{"tool_input": {}}]}]',
            "[0].expected_tool_use[0].tool_name",
        ),
        ('[{"reference": "no query"}]', "[0].query"),
        (
            '[{"name": "c", "data": [{"query": "q", "expected_tool_use": [{"tool_name": "t", '
            '"tool_input": "x=1"}]}]}]',
            "[0].data[0].expected_tool_use[0].tool_input",
        ),
    ],
)
def test_a_malformed_eval_set_file_names_the_file_and_the_field(
    tmp_path: Path, content: str, field: str
) -> None:
    path = tmp_path / "bad.evalset.json"
    path.write_text(content)
    with pytest.raises(EvalFileError) as raised:
        load_eval_set_from_file(str(path), "bad")
    assert raised.value.path == str(path)
    assert raised.value.field == field
    assert str(path) in str(raised.value) and field in str(raised.value)


def test_an_eval_set_file_that_is_not_json_says_so(tmp_path: Path) -> None:
    path = tmp_path / "broken.evalset.json"
    path.write_text('{"eval_set_id": ')
    with pytest.raises(EvalFileError, match="not valid JSON"):
        load_eval_set_from_file(str(path), "broken")


# --- test_config.json -----------------------------------------------------------------------


def test_a_config_with_a_criterion_object_and_a_bare_threshold() -> None:
    config = get_evaluation_criteria_or_default(str(DATA / "test_config.json"))
    metrics = get_eval_metrics_from_config(config)
    assert [m.metric_name for m in metrics] == [
        "tool_trajectory_avg_score",
        "response_match_score",
        *EFFICIENCY,
    ]
    trajectory, response = metrics[0], metrics[1]
    assert trajectory.threshold == 0.5
    criterion = ToolTrajectoryCriterion.model_validate(trajectory.criterion.model_dump())  # type: ignore[union-attr]
    assert criterion.match_type is ToolTrajectoryCriterion.MatchType.IN_ORDER
    assert criterion.ignore_args is True
    assert response.threshold == 0.7
    assert type(response.criterion) is BaseCriterion
    assert response.criterion.threshold == 0.7
    assert [m.threshold for m in metrics[2:]] == [None] * 4


def test_without_a_config_the_defaults_are_adks(tmp_path: Path) -> None:
    for path in (None, str(tmp_path / "absent.json")):
        config = get_evaluation_criteria_or_default(path)
        assert config.criteria == {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}


def test_an_efficiency_metric_named_in_the_config_is_not_added_twice() -> None:
    config = EvalConfig(criteria={"token_usage_v1": 1.0})
    names = [m.metric_name for m in get_eval_metrics_from_config(config)]
    assert names.count("token_usage_v1") == 1 and len(names) == 4


def test_a_malformed_config_names_the_file_and_the_criterion(tmp_path: Path) -> None:
    path = tmp_path / "test_config.json"
    path.write_text('{"criteria": {"response_match_score": "high"}}')
    with pytest.raises(EvalFileError) as raised:
        get_evaluation_criteria_or_default(str(path))
    assert raised.value.field is not None
    assert raised.value.field.startswith("criteria.response_match_score")
    assert str(path) in str(raised.value)


# --- managers -------------------------------------------------------------------------------


@pytest.fixture(params=["memory", "local"])
def manager(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        return InMemoryEvalSetsManager()
    (tmp_path / "app").mkdir()
    return LocalEvalSetsManager(str(tmp_path))


def test_a_manager_creates_lists_and_edits_cases(manager: Any) -> None:
    created = manager.create_eval_set("app", "smoke")
    assert (created.eval_set_id, created.eval_cases) == ("smoke", [])
    manager.create_eval_set("app", "another")
    assert sorted(manager.list_eval_sets("app")) == ["another", "smoke"]
    with pytest.raises(ValueError, match="already exists"):
        manager.create_eval_set("app", "smoke")

    manager.add_eval_case("app", "smoke", case("a", "hello"))
    manager.add_eval_case("app", "smoke", case("b", "bye"))
    with pytest.raises(ValueError, match="already exists"):
        manager.add_eval_case("app", "smoke", case("a", "again"))
    assert (
        manager.get_eval_case("app", "smoke", "a").conversation[0].user_content.parts[0].text
        == "hello"
    )

    manager.update_eval_case("app", "smoke", case("a", "hello there"))
    updated = manager.get_eval_case("app", "smoke", "a")
    assert updated.conversation[0].user_content.parts[0].text == "hello there"
    assert [c.eval_id for c in manager.get_eval_set("app", "smoke").eval_cases] == ["a", "b"]

    manager.delete_eval_case("app", "smoke", "a")
    assert manager.get_eval_case("app", "smoke", "a") is None
    assert [c.eval_id for c in manager.get_eval_set("app", "smoke").eval_cases] == ["b"]
    with pytest.raises(NotFoundError):
        manager.delete_eval_case("app", "smoke", "a")
    with pytest.raises(NotFoundError):
        manager.update_eval_case("app", "smoke", case("zzz", "x"))
    with pytest.raises(NotFoundError):
        manager.add_eval_case("app", "missing", case("c", "x"))
    assert manager.get_eval_set("app", "missing") is None
    assert manager.get_eval_case("app", "missing", "b") is None


def test_local_eval_sets_live_in_the_apps_folder(tmp_path: Path) -> None:
    manager = LocalEvalSetsManager(str(tmp_path))
    manager.create_eval_set("weather", "smoke")
    manager.add_eval_case("weather", "smoke", case("a", "hello"))
    path = tmp_path / "weather" / "smoke.evalset.json"
    written = json.loads(path.read_text())
    assert written["eval_set_id"] == "smoke"
    assert written["eval_cases"][0]["eval_id"] == "a"
    assert written["eval_cases"][0]["conversation"][0]["user_content"]["parts"] == [
        {"text": "hello"}
    ]
    # A hand-written ADK file placed there is listed and read as is.
    (tmp_path / "weather" / "weather_set.evalset.json").write_text(
        (DATA / "weather.evalset.json").read_text()
    )
    assert manager.list_eval_sets("weather") == ["smoke", "weather_set"]
    assert manager.get_eval_set("weather", "weather_set") == weather_set()


def test_local_eval_set_ids_and_app_names_are_checked(tmp_path: Path) -> None:
    manager = LocalEvalSetsManager(str(tmp_path))
    with pytest.raises(ValueError, match="letters, digits and underscores"):
        manager.create_eval_set("app", "has-dash")
    with pytest.raises(ValueError, match="path separator"):
        manager.get_eval_set("../elsewhere", "smoke")
    with pytest.raises(NotFoundError, match="no folder"):
        manager.list_eval_sets("absent")


# --- results --------------------------------------------------------------------------------


def a_case_result() -> EvalCaseResult:
    invocation = weather_set().eval_cases[0].conversation[0]  # type: ignore[index]
    metric = EvalMetricResult(
        metric_name="tool_trajectory_avg_score",
        threshold=1.0,
        criterion=BaseCriterion(threshold=1.0),
        score=1.0,
        eval_status=EvalStatus.PASSED,
    )
    return EvalCaseResult(
        eval_set_id="weather_set",
        eval_id="forecast_then_thanks",
        final_eval_status=EvalStatus.PASSED,
        overall_eval_metric_results=[metric],
        eval_metric_result_per_invocation=[
            EvalMetricResultPerInvocation(
                actual_invocation=invocation,
                expected_invocation=invocation,
                eval_metric_results=[metric],
            )
        ],
        session_id="s-1",
        user_id="tester",
    )


def test_results_are_saved_where_adk_saves_them_and_load_back(tmp_path: Path) -> None:
    manager = LocalEvalSetResultsManager(str(tmp_path))
    assert manager.list_eval_set_results("weather") == []
    manager.save_eval_set_result("weather", "weather_set", [a_case_result()])
    [result_id] = manager.list_eval_set_results("weather")
    assert result_id.startswith("weather_weather_set_")
    path = tmp_path / "weather" / ".adk" / "eval_history" / f"{result_id}.evalset_result.json"
    assert json.loads(path.read_text())["eval_set_id"] == "weather_set"  # snake_case, as ADK writes
    loaded = manager.get_eval_set_result("weather", result_id)
    assert loaded.eval_set_result_id == result_id
    assert loaded.eval_case_results == [a_case_result()]
    with pytest.raises(NotFoundError, match="not found"):
        manager.get_eval_set_result("weather", "nope")


def test_an_older_double_encoded_result_file_loads(tmp_path: Path) -> None:
    result = EvalSetResult(eval_set_result_id="r1", eval_set_id="s", eval_case_results=[])
    folder = tmp_path / "app" / ".adk" / "eval_history"
    folder.mkdir(parents=True)
    (folder / "r1.evalset_result.json").write_text(json.dumps(result.model_dump_json()))
    manager = LocalEvalSetResultsManager(str(tmp_path))
    assert manager.get_eval_set_result("app", "r1") == result


def test_a_corrupt_result_file_names_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "app" / ".adk" / "eval_history"
    folder.mkdir(parents=True)
    (folder / "r1.evalset_result.json").write_text('{"evalSetId": "s"}')
    with pytest.raises(EvalFileError, match="eval_set_result_id"):
        LocalEvalSetResultsManager(str(tmp_path)).get_eval_set_result("app", "r1")


# --- against google-adk itself --------------------------------------------------------------


def adk_dump(model: str, text: str, **dump: Any) -> Any:
    if not ADK_PYTHON.exists():
        pytest.skip(f"google-adk's venv is missing ({ADK_PYTHON}); make it with bench/peers.py")
    request = json.dumps({"model": model, "json": text, "dump": dump})
    done = subprocess.run(
        [str(ADK_PYTHON), str(Path(__file__).with_name("adk_roundtrip.py"))],
        input=request,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_adk_reads_the_eval_sets_cairn_writes_and_writes_the_same_json(tmp_path: Path) -> None:
    manager = LocalEvalSetsManager(str(tmp_path))
    manager.create_eval_set("weather", "smoke")
    for eval_case in weather_set().eval_cases:
        manager.add_eval_case("weather", "smoke", eval_case)
    written = (tmp_path / "weather" / "smoke.evalset.json").read_text()
    options = {"exclude_unset": True, "exclude_defaults": True, "exclude_none": True}
    assert adk_dump("EvalSet", written, **options) == json.loads(written)
    camel = weather_set().model_dump_json(by_alias=True, exclude_none=True)
    assert adk_dump("EvalSet", camel, by_alias=True, exclude_none=True) == json.loads(camel)
    legacy = load_test_file(str(DATA / "trip.test.json")).model_dump_json(exclude_none=True)
    assert adk_dump("EvalSet", legacy, exclude_none=True) == json.loads(legacy)


def test_adk_reads_the_results_cairn_writes_and_writes_the_same_json(tmp_path: Path) -> None:
    manager = LocalEvalSetResultsManager(str(tmp_path))
    manager.save_eval_set_result("weather", "weather_set", [a_case_result()])
    [path] = (tmp_path / "weather" / ".adk" / "eval_history").iterdir()
    written = path.read_text()
    assert adk_dump("EvalSetResult", written, exclude_none=True) == json.loads(written)


def test_adk_reads_the_eval_config_as_cairn_does() -> None:
    config = get_evaluation_criteria_or_default(str(DATA / "test_config.json"))
    for by_alias in (True, False):
        text = config.model_dump_json(by_alias=by_alias, exclude_none=True)
        assert adk_dump("EvalConfig", text, by_alias=by_alias, exclude_none=True) == json.loads(
            text
        )


def test_adk_reads_a_scenario_case_with_a_persona_as_cairn_writes_it() -> None:
    persona = {
        "id": "hurried",
        "description": "A traveller in a hurry.",
        "behaviors": [
            {
                "name": "terse",
                "description": "Answers in few words.",
                "behavior_instructions": ["Reply in five words or fewer."],
                "violation_rubrics": ["The reply has more than five words."],
            }
        ],
    }
    case = EvalCase.model_validate(
        {
            "eval_id": "simulated",
            "conversation_scenario": {
                "starting_prompt": "I need a flight.",
                "conversation_plan": "Book the cheapest flight to Rome tomorrow.",
                "user_persona": persona,
            },
            "session_input": {"app_name": "travel", "user_id": "u", "session_id": "fixed"},
        }
    )
    assert case.conversation_scenario is not None
    assert case.conversation_scenario.user_persona is not None
    assert case.conversation_scenario.user_persona.behaviors[0].get_behavior_instructions_str() == (
        "  * Reply in five words or fewer."
    )
    eval_set = EvalSet(eval_set_id="sim", eval_cases=[case])
    for by_alias in (True, False):
        text = eval_set.model_dump_json(by_alias=by_alias, exclude_none=True)
        assert EvalSet.model_validate_json(text) == eval_set
        assert adk_dump("EvalSet", text, by_alias=by_alias, exclude_none=True) == json.loads(text)


def _without_generated_ids(eval_set: dict[str, Any]) -> dict[str, Any]:
    """The eval set with the random ids and clock times a conversion makes left out."""
    eval_set = {
        k: v for k, v in eval_set.items() if k not in ("eval_set_id", "name", "creation_timestamp")
    }
    for case in eval_set["eval_cases"]:
        case.pop("creation_timestamp")
        for invocation in case["conversation"]:
            invocation.pop("invocation_id")
            invocation.pop("creation_timestamp")
    return eval_set


def test_a_legacy_test_file_converts_as_adks_agent_evaluator_converts_it() -> None:
    if not ADK_PYTHON.exists():
        pytest.skip(f"google-adk's venv is missing ({ADK_PYTHON}); make it with bench/peers.py")
    path = str(DATA / "trip.test.json")
    session = {"app_name": "trip", "user_id": "u1", "state": {"a": 1}}
    done = subprocess.run(
        [
            str(ADK_PYTHON),
            str(Path(__file__).with_name("adk_legacy.py")),
            path,
            json.dumps(session),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    ours = json.loads(load_test_file(path, session).model_dump_json(exclude_none=True))
    assert _without_generated_ids(json.loads(done.stdout)) == _without_generated_ids(ours)
