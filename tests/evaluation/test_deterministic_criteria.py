"""tool_trajectory_avg_score and response_match_score against hand-computed expectations,
ADK's pass/fail rules, and the metric registry that finds their evaluators by name."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from cairn.errors import NotFoundError
from cairn.evaluation.errors import UnknownMetricError
from cairn.evaluation.eval_case import (
    IntermediateData,
    Invocation,
    InvocationEvent,
    InvocationEvents,
)
from cairn.evaluation.eval_config import (
    EvalConfig,
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)
from cairn.evaluation.eval_metrics import (
    BaseCriterion,
    EvalMetric,
    EvalStatus,
    Interval,
    MetricInfo,
    MetricValueInfo,
    ToolTrajectoryCriterion,
)
from cairn.evaluation.evaluator import EvaluationResult, Evaluator
from cairn.evaluation.final_response_match_v1 import RougeEvaluator, _calculate_rouge_1_scores
from cairn.evaluation.metric_evaluator_registry import (
    DEFAULT_METRIC_EVALUATOR_REGISTRY,
    MetricEvaluatorRegistry,
)
from cairn.evaluation.response_evaluator import ResponseEvaluator
from cairn.evaluation.trajectory_evaluator import TrajectoryEvaluator

DATA = Path(__file__).resolve().parent / "data"
MatchType = ToolTrajectoryCriterion.MatchType


def call(name: str, **args: Any) -> types.FunctionCall:
    return types.FunctionCall(name=name, args=args)


def turn(*calls: types.FunctionCall, answer: str = "") -> Invocation:
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part.from_text(text="q")]),
        final_response=types.Content(role="model", parts=[types.Part.from_text(text=answer)]),
        intermediate_data=IntermediateData(tool_uses=list(calls)),
    )


def recorded(*calls: types.FunctionCall) -> Invocation:
    """An invocation in the events shape, one event per call."""
    events = [
        InvocationEvent(
            author="agent", content=types.Content(role="model", parts=[types.Part(function_call=c)])
        )
        for c in calls
    ]
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part.from_text(text="q")]),
        intermediate_data=InvocationEvents(invocation_events=events),
    )


def trajectory(
    match_type: MatchType, threshold: float = 1.0, **options: Any
) -> TrajectoryEvaluator:
    criterion = ToolTrajectoryCriterion(threshold=threshold, match_type=match_type, **options)
    return TrajectoryEvaluator(
        eval_metric=EvalMetric(metric_name="tool_trajectory_avg_score", criterion=criterion)
    )


def score(evaluator: Evaluator, actual: Invocation, expected: Invocation) -> float | None:
    result = evaluator.evaluate_invocations([actual], [expected])
    assert isinstance(result, EvaluationResult)
    return result.overall_score


A, B, C = call("a", x=1), call("b", y=2), call("c")
EXPECTED = turn(A, B)

# (actual calls, EXACT, IN_ORDER, ANY_ORDER), all against the expected [a(x=1), b(y=2)].
CASES = [
    ("same calls", [A, B], 1.0, 1.0, 1.0),
    ("reordered", [B, A], 0.0, 0.0, 1.0),
    ("an extra call between", [A, C, B], 0.0, 1.0, 1.0),
    ("an extra call after", [A, B, C], 0.0, 1.0, 1.0),
    ("reordered with an extra call", [B, C, A], 0.0, 0.0, 1.0),
    ("one call missing", [A], 0.0, 0.0, 0.0),
    ("no calls", [], 0.0, 0.0, 0.0),
    ("other arguments", [call("a", x=9), B], 0.0, 0.0, 0.0),
    ("the expected call twice", [A, A, B], 0.0, 1.0, 1.0),
]


@pytest.mark.parametrize(("label", "calls", "exact", "in_order", "any_order"), CASES)
def test_each_match_type_scores_the_trajectory(
    label: str, calls: list[types.FunctionCall], exact: float, in_order: float, any_order: float
) -> None:
    actual = turn(*calls)
    assert score(trajectory(MatchType.EXACT), actual, EXPECTED) == exact, label
    assert score(trajectory(MatchType.IN_ORDER), actual, EXPECTED) == in_order, label
    assert score(trajectory(MatchType.ANY_ORDER), actual, EXPECTED) == any_order, label


def test_one_actual_call_matches_one_expected_call_only() -> None:
    expected = turn(A, A)
    for match_type in MatchType:
        assert score(trajectory(match_type), turn(A, B), expected) == 0.0, match_type
    assert score(trajectory(MatchType.ANY_ORDER), turn(B, A, A), expected) == 1.0


def test_with_no_expected_tools_only_exact_minds_extra_calls() -> None:
    expected = turn()
    assert score(trajectory(MatchType.EXACT), turn(), expected) == 1.0
    assert score(trajectory(MatchType.EXACT), turn(C), expected) == 0.0
    assert score(trajectory(MatchType.IN_ORDER), turn(C), expected) == 1.0
    assert score(trajectory(MatchType.ANY_ORDER), turn(C), expected) == 1.0


def test_ignore_args_compares_tool_names_only() -> None:
    actual = turn(call("a", x=9), call("b"))
    for match_type in MatchType:
        assert score(trajectory(match_type, ignore_args=True), actual, EXPECTED) == 1.0
        assert score(trajectory(match_type), actual, EXPECTED) == 0.0
    assert score(trajectory(MatchType.EXACT, ignore_args=True), turn(B, A), EXPECTED) == 0.0


def test_recorded_events_are_compared_with_hand_written_lists() -> None:
    assert score(trajectory(MatchType.EXACT), recorded(A, B), EXPECTED) == 1.0
    assert score(trajectory(MatchType.EXACT), recorded(B, A), EXPECTED) == 0.0


def test_the_case_score_is_the_mean_and_passes_at_the_threshold() -> None:
    actual = [turn(A, B), turn(B, A), turn(A, B), turn(A, B)]
    expected = [EXPECTED] * 4
    result = trajectory(MatchType.EXACT, threshold=0.75).evaluate_invocations(actual, expected)
    assert result.overall_score == 0.75
    assert result.overall_eval_status is EvalStatus.PASSED  # a score equal to the threshold
    assert [r.score for r in result.per_invocation_results] == [1.0, 0.0, 1.0, 1.0]
    assert [r.eval_status for r in result.per_invocation_results] == [
        EvalStatus.PASSED,
        EvalStatus.FAILED,
        EvalStatus.PASSED,
        EvalStatus.PASSED,
    ]
    strict = trajectory(MatchType.EXACT, threshold=0.8).evaluate_invocations(actual, expected)
    assert strict.overall_eval_status is EvalStatus.FAILED
    assert strict.per_invocation_results[0].expected_invocation == EXPECTED


def test_no_invocations_is_not_evaluated() -> None:
    for evaluator in (
        trajectory(MatchType.EXACT),
        RougeEvaluator(EvalMetric(metric_name="m", threshold=0.5)),
    ):
        result = evaluator.evaluate_invocations([], [])
        assert isinstance(result, EvaluationResult)
        assert result.overall_eval_status is EvalStatus.NOT_EVALUATED
        assert (result.overall_score, result.per_invocation_results) == (None, [])


def test_expected_invocations_are_required_and_must_pair_up() -> None:
    evaluator = trajectory(MatchType.EXACT)
    with pytest.raises(ValueError, match="expected invocations"):
        evaluator.evaluate_invocations([turn(A)], None)
    with pytest.raises(ValueError, match="ran 2 invocations but the case expects 1"):
        evaluator.evaluate_invocations([turn(A), turn(B)], [EXPECTED])


def test_the_trajectory_criterion_comes_from_the_config_or_a_bare_threshold() -> None:
    config = get_evaluation_criteria_or_default(str(DATA / "test_config.json"))
    metric = get_eval_metrics_from_config(config)[0]
    evaluator = DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(metric)
    assert isinstance(evaluator, TrajectoryEvaluator)
    # IN_ORDER, ignore_args, threshold 0.5 (data/test_config.json).
    assert score(evaluator, turn(call("a", x=5), C, call("b")), EXPECTED) == 1.0
    bare = TrajectoryEvaluator(eval_metric=EvalMetric(metric_name="t", threshold=1.0))
    assert score(bare, turn(A, C, B), EXPECTED) == 0.0  # EXACT when only a threshold is given
    assert score(TrajectoryEvaluator(threshold=1.0), turn(A, B), EXPECTED) == 1.0


def test_a_match_type_is_read_in_any_spelling_and_a_wrong_one_names_the_metric() -> None:
    for spelling in ("in_order", "IN-ORDER", " In Order "):
        assert (
            ToolTrajectoryCriterion(threshold=1, match_type=spelling).match_type
            is MatchType.IN_ORDER
        )  # type: ignore[arg-type]
    config = EvalConfig.model_validate(
        {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "SOMETIMES"}}}
    )
    metric = get_eval_metrics_from_config(config)[0]
    with pytest.raises(ValueError, match="`tool_trajectory_avg_score` needs a criterion"):
        TrajectoryEvaluator(eval_metric=metric)
    with pytest.raises(ValueError, match="either eval_metric or threshold"):
        TrajectoryEvaluator(threshold=1.0, eval_metric=metric)
    with pytest.raises(ValueError, match="has no threshold"):
        TrajectoryEvaluator(eval_metric=EvalMetric(metric_name="t"))


# --- response_match_score -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "reference", "precision", "recall", "fmeasure"),
    [
        # 3 shared unigrams; 3 in the response, 6 in the reference: F = 2PR/(P+R) = 2/3.
        ("the cat sat", "the cat sat on the mat", 1.0, 0.5, 2 / 3),
        ("The cat sat on the mat.", "the cat sat on the mat", 1.0, 1.0, 1.0),
        # Porter stemming: running -> run, dogs -> dog.
        ("running dogs", "run dog", 1.0, 1.0, 1.0),
        # Punctuation separates words; case is ignored.
        ("Hello, WORLD!", "hello world", 1.0, 1.0, 1.0),
        ("blue sky", "red sea", 0.0, 0.0, 0.0),
        # One token per ideograph: 5 of 6 shared.
        ("今天天气很好", "今天天气不好", 5 / 6, 5 / 6, 5 / 6),
        # Accented and Cyrillic words are words, not dropped: 1 of 2 shared.
        ("café привет", "café мир", 0.5, 0.5, 0.5),
        # Thai: one token per letter with its marks. NFKC splits the vowel ำ into the mark ํ
        # and the letter า, so: กิ|น|ข้|า|ว against กิ|น|น้ํ|า, 3 shared; P 3/5, R 3/4, F 2/3.
        ("กินข้าว", "กินน้ำ", 3 / 5, 3 / 4, 2 / 3),
        ("", "something", 0.0, 0.0, 0.0),
        ("", "", 0.0, 0.0, 0.0),
    ],
)
def test_rouge_1_scores(
    response: str, reference: str, precision: float, recall: float, fmeasure: float
) -> None:
    scores = _calculate_rouge_1_scores(response, reference)
    assert scores.precision == pytest.approx(precision)
    assert scores.recall == pytest.approx(recall)
    assert scores.fmeasure == pytest.approx(fmeasure)


def test_response_match_score_averages_invocations_against_the_threshold() -> None:
    evaluator = DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(
        EvalMetric(metric_name="response_match_score", criterion=BaseCriterion(threshold=0.8))
    )
    assert isinstance(evaluator, ResponseEvaluator)
    actual = [turn(answer="the cat sat on the mat"), turn(answer="the cat sat")]
    expected = [turn(answer="The cat sat on the mat"), turn(answer="the cat sat on the mat")]
    result = evaluator.evaluate_invocations(actual, expected)
    assert isinstance(result, EvaluationResult)
    assert [r.score for r in result.per_invocation_results] == pytest.approx([1.0, 2 / 3])
    assert [r.eval_status for r in result.per_invocation_results] == [
        EvalStatus.PASSED,
        EvalStatus.FAILED,
    ]
    assert result.overall_score == pytest.approx(5 / 6)
    assert result.overall_eval_status is EvalStatus.PASSED


def test_the_final_responses_text_parts_are_joined_and_other_parts_ignored() -> None:
    parts = [
        types.Part.from_text(text="the cat"),
        types.Part(function_call=types.FunctionCall(name="noise")),
        types.Part.from_text(text="sat"),
    ]
    actual = Invocation(
        user_content=types.Content(role="user", parts=[]),
        final_response=types.Content(role="model", parts=parts),
    )
    no_response = Invocation(user_content=types.Content(role="user", parts=[]))
    evaluator = RougeEvaluator(EvalMetric(metric_name="response_match_score", threshold=0.5))
    assert score(evaluator, actual, turn(answer="the cat sat")) == 1.0
    result = evaluator.evaluate_invocations([no_response], [turn(answer="the cat sat")])
    assert result.overall_score == 0.0 and result.overall_eval_status is EvalStatus.FAILED  # type: ignore[union-attr]


def test_response_evaluation_score_says_what_to_use_instead() -> None:
    metric = EvalMetric(metric_name="response_evaluation_score", threshold=3.0)
    with pytest.raises(ValueError, match="use `response_match_score`"):
        DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(metric)


# --- the registry ---------------------------------------------------------------------------


def test_the_registry_knows_the_deterministic_metrics_by_adks_names() -> None:
    infos = {i.metric_name: i for i in MetricEvaluatorRegistry().get_registered_metrics()}
    assert {
        "tool_trajectory_avg_score",
        "response_match_score",
        "response_evaluation_score",
    } <= set(infos)
    assert infos["response_match_score"].metric_value_info.interval == Interval(
        min_value=0.0, max_value=1.0
    )
    assert infos["response_evaluation_score"].metric_value_info.interval == Interval(
        min_value=1.0, max_value=5.0
    )


def test_an_unknown_metric_is_a_typed_error_naming_it() -> None:
    with pytest.raises(UnknownMetricError, match="`no_such_metric`") as raised:
        DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(
            EvalMetric(metric_name="no_such_metric", threshold=1)
        )
    assert isinstance(raised.value, NotFoundError)
    assert "tool_trajectory_avg_score" in str(raised.value)


class AlwaysHalf(Evaluator):
    def __init__(self, eval_metric: EvalMetric) -> None:
        self.eval_metric = eval_metric

    def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: Any = None,
    ) -> EvaluationResult:
        return EvaluationResult(overall_score=0.5, overall_eval_status=EvalStatus.PASSED)


def test_registered_evaluators_are_built_per_metric_and_forks_are_isolated() -> None:
    registry = MetricEvaluatorRegistry()
    info = MetricInfo(
        metric_name="half",
        metric_value_info=MetricValueInfo(interval=Interval(min_value=0, max_value=1)),
    )
    registry.register_evaluator(info, AlwaysHalf)
    metric = EvalMetric(metric_name="half", threshold=0.1)
    built = registry.get_evaluator(metric)
    assert isinstance(built, AlwaysHalf) and built.eval_metric is metric
    assert registry.get_evaluator(metric) is not built  # a new evaluator each time

    fork = registry.fork()
    fork.register_evaluator(info.model_copy(update={"metric_name": "fork_only"}), AlwaysHalf)
    assert isinstance(fork.get_evaluator(metric), AlwaysHalf)  # what was registered before
    with pytest.raises(UnknownMetricError):
        registry.get_evaluator(EvalMetric(metric_name="fork_only", threshold=0.1))
    with pytest.raises(UnknownMetricError):
        MetricEvaluatorRegistry().get_evaluator(metric)  # not in a new registry either


# --- against google-adk itself --------------------------------------------------------------

ADK_PYTHON = Path(__file__).resolve().parents[2] / "bench" / ".peers" / "adk" / "bin" / "python"


def test_adks_trajectory_evaluator_gives_the_same_scores() -> None:
    if not ADK_PYTHON.exists():
        pytest.skip(f"google-adk's venv is missing ({ADK_PYTHON}); make it with bench/peers.py")
    requests, ours = [], []
    for match_type in MatchType:
        for ignore_args in (False, True):
            criterion = {
                "threshold": 0.5,
                "match_type": match_type.name,
                "ignore_args": ignore_args,
            }
            actual = [turn(*calls) for _, calls, *_ in CASES] + [recorded(B, A)]
            expected = [EXPECTED] * len(actual)
            requests.append(
                {
                    "criterion": criterion,
                    "actual": [i.model_dump(mode="json", exclude_none=True) for i in actual],
                    "expected": [i.model_dump(mode="json", exclude_none=True) for i in expected],
                }
            )
            evaluator = TrajectoryEvaluator(
                eval_metric=EvalMetric(
                    metric_name="tool_trajectory_avg_score",
                    criterion=ToolTrajectoryCriterion.model_validate(criterion),
                )
            )
            result = evaluator.evaluate_invocations(actual, expected)
            ours.append(
                {
                    "scores": [r.score for r in result.per_invocation_results],
                    "overall": result.overall_score,
                    "status": result.overall_eval_status.name,
                }
            )
    done = subprocess.run(
        [str(ADK_PYTHON), str(Path(__file__).with_name("adk_trajectory.py"))],
        input=json.dumps(requests),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ours


def test_adks_rouge_1_gives_the_same_scores() -> None:
    if not ADK_PYTHON.exists():
        pytest.skip(f"google-adk's venv is missing ({ADK_PYTHON}); make it with bench/peers.py")
    import rouge_score

    holder = str(Path(rouge_score.__file__).resolve().parents[1])
    pairs = [
        ["The quick brown foxes were jumping", "a quick brown fox jumps over the dog"],
        ["Il fait 4 °C à Oslo, ça caille !", "À Oslo il fait 4 degrés"],
        ["東京は晴れです。気温は２０度", "東京は曇りです、気温20度"],
        ["서울 날씨는 맑음", "서울은 맑아요"],
        ["ສະບາຍດີ ຂອບໃຈ", "ສະບາຍດີ"],
        ["မင်္ဂလာပါ", "မင်္ဂလာ"],
        ["សួស្តី ពិភពលោក", "សួស្តី"],
        ["naïve café, résumé", "naive cafe resume"],
        ["مرحبا بالعالم", "مرحبا"],
        ["", "nothing"],
        ["  \n\t ", "   "],
        ["x1 y2-z3 don't", "x1 y2 z3 dont"],
        ["e\u0301cole", "\u00e9cole"],
    ]
    done = subprocess.run(
        [str(ADK_PYTHON), str(Path(__file__).with_name("adk_rouge.py")), holder],
        input=json.dumps(pairs),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    theirs = [value for score in json.loads(done.stdout) for value in score]
    ours = [value for pair in pairs for value in _calculate_rouge_1_scores(*pair)]
    assert theirs == pytest.approx(ours)
    assert len(ours) == 3 * len(pairs) and any(0 < value < 1 for value in ours)
