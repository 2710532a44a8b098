"""The judged metrics that read more than one reply: the multi-turn judges (one verdict on the
whole conversation) and hallucinations_v1 (segmenter, then sentence validator)."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types
from tests.support.scripted_judges import ScriptedJudges, prompt_of

from cairn.evaluation._multi_turn_judge import _MultiTurnJudge
from cairn.evaluation.app_details import AgentDetails, AppDetails
from cairn.evaluation.conversation_scenarios import ConversationScenario
from cairn.evaluation.eval_case import Invocation, InvocationEvent, InvocationEvents
from cairn.evaluation.eval_metrics import (
    EvalMetric,
    EvalStatus,
    HallucinationsCriterion,
    JudgeModelOptions,
    RubricsBasedCriterion,
)
from cairn.evaluation.eval_rubrics import Rubric, RubricContent
from cairn.evaluation.hallucinations_v1 import HallucinationsV1Evaluator
from cairn.evaluation.multi_turn_task_success_evaluator import MultiTurnTaskSuccessV1Evaluator
from cairn.evaluation.multi_turn_tool_use_quality_evaluator import (
    MultiTurnToolUseQualityV1Evaluator,
)
from cairn.evaluation.multi_turn_trajectory_quality_evaluator import (
    MultiTurnTrajectoryQualityV1Evaluator,
)
from cairn.evaluation.rubric_based_multi_turn_trajectory_evaluator import (
    RubricBasedMultiTurnTrajectoryEvaluator,
)

JUDGE = "scripted-judge"


@pytest.fixture
def judges(monkeypatch: pytest.MonkeyPatch) -> ScriptedJudges:
    return ScriptedJudges(monkeypatch)


def content(role: str, *parts: types.Part) -> types.Content:
    return types.Content(role=role, parts=list(parts))


APP = AppDetails(
    agent_details={
        "weather_agent": AgentDetails(
            name="weather_agent",
            instructions="Answer weather questions; always call get_weather.",
            tool_declarations=[
                types.Tool(
                    function_declarations=[
                        types.FunctionDeclaration(
                            name="get_weather", description="Today's weather in a city."
                        )
                    ]
                )
            ],
        )
    }
)


def weather_turn(city: str, answer: str, said_first: str | None = None, **more: Any) -> Invocation:
    call = types.FunctionCall(id=f"c-{city}", name="get_weather", args={"city": city})
    result = types.FunctionResponse(
        id=f"c-{city}", name="get_weather", response={"sky": "sunny", "celsius": 18}
    )
    first = [types.Part(text=said_first)] if said_first else []
    return Invocation(
        user_content=content("user", types.Part(text=f"Weather in {city}?")),
        final_response=content("model", types.Part(text=answer)),
        intermediate_data=InvocationEvents(
            invocation_events=[
                InvocationEvent(
                    author="weather_agent",
                    content=content("model", *first, types.Part(function_call=call)),
                ),
                InvocationEvent(
                    author="weather_agent",
                    content=content("user", types.Part(function_response=result)),
                ),
            ]
        ),
        app_details=APP,
        **more,
    )


def blocks(*verdicts: tuple[Rubric, str]) -> str:
    return "\n\n".join(
        f"STEP 1: checking.\nID: {r.rubric_id}\nProperty: {r.rubric_content.text_property}\n"
        f"Rationale: Turn 1 shows it.\nVerdict: {answer}"
        for r, answer in verdicts
    )


def options(num_samples: int = 1) -> JudgeModelOptions:
    return JudgeModelOptions(judge_model=JUDGE, num_samples=num_samples)


# --- rubric_based_multi_turn_trajectory_quality_v1 -------------------------------------------

CONFIRMS = Rubric(
    rubric_id="confirms",
    rubric_content=RubricContent(text_property="The agent confirms the city before answering."),
)
CALLS_TOOL = Rubric(
    rubric_id="calls_tool",
    rubric_content=RubricContent(text_property="The agent calls get_weather for every city."),
    type="TRAJECTORY_QUALITY",
)


async def test_the_conversation_is_judged_once_on_its_last_invocation(
    judges: ScriptedJudges,
) -> None:
    judges.add(
        JUDGE,
        blocks((CONFIRMS, "no"), (CALLS_TOOL, "yes")),
        blocks((CONFIRMS, "yes"), (CALLS_TOOL, "yes")),
        blocks((CONFIRMS, "no"), (CALLS_TOOL, "yes")),
    )
    criterion = RubricsBasedCriterion(
        threshold=0.5, judge_model_options=options(3), rubrics=[CONFIRMS]
    )
    evaluator = RubricBasedMultiTurnTrajectoryEvaluator(
        EvalMetric(metric_name="rubric_based_multi_turn_trajectory_quality_v1", criterion=criterion)
    )
    conversation = [
        weather_turn("Paris", "Paris is sunny, 18°C."),
        weather_turn("Rome", "Rome is sunny too.", rubrics=[CALLS_TOOL]),
    ]
    result = await evaluator.evaluate_invocations(conversation)

    first, last = result.per_invocation_results
    assert (first.score, first.eval_status) == (None, EvalStatus.NOT_EVALUATED)
    # confirms: 1 yes : 2 no -> 0; calls_tool: 3 yes -> 1; mean 0.5.
    assert {s.rubric_id: s.score for s in last.rubric_scores or []} == {
        "confirms": 0.0,
        "calls_tool": 1.0,
    }
    assert last.score == 0.5 and last.eval_status == EvalStatus.PASSED
    assert result.overall_score == 0.5 and result.overall_eval_status == EvalStatus.PASSED
    assert len(judges.requests) == 3  # three samples, of the last invocation only

    prompt = prompt_of(judges.requests[0])
    assert "USER TURN 1: Weather in Paris?" in prompt
    assert 'AGENT (weather_agent) TURN 1 (tool call): get_weather({"city": "Paris"})' in prompt
    assert "AGENT (weather_agent) TURN 2: Rome is sunny too." in prompt
    assert '"id": "calls_tool"' in prompt and '"type": "TRAJECTORY_QUALITY"' in prompt
    assert "Answer weather questions; always call get_weather." in prompt
    assert "- get_weather: Today's weather in a city." in prompt


# --- the judged multi-turn metrics (Vertex AI's in ADK) -------------------------------------

SCENARIO = ConversationScenario(
    starting_prompt="Weather in Paris?",
    conversation_plan="Get the weather for Paris, then for Rome.",
)


def multi_turn(cls: type[_MultiTurnJudge], threshold: float, samples: int = 1) -> _MultiTurnJudge:
    criterion = RubricsBasedCriterion(threshold=threshold, judge_model_options=options(samples))
    name = {
        MultiTurnTaskSuccessV1Evaluator: "multi_turn_task_success_v1",
        MultiTurnTrajectoryQualityV1Evaluator: "multi_turn_trajectory_quality_v1",
        MultiTurnToolUseQualityV1Evaluator: "multi_turn_tool_use_quality_v1",
    }[cls]
    return cls(EvalMetric(metric_name=name, criterion=criterion))


async def test_task_success_scores_the_built_in_properties_on_the_last_turn(
    judges: ScriptedJudges,
) -> None:
    goal, handled, truthful = MultiTurnTaskSuccessV1Evaluator.BUILT_IN_RUBRICS
    judges.add(JUDGE, blocks((goal, "yes"), (handled, "yes"), (truthful, "no")))
    conversation = [
        weather_turn("Paris", "Paris is sunny, 18°C."),
        weather_turn("Rome", "Rome is 25°C.", rubrics=[CALLS_TOOL]),
    ]
    result = await multi_turn(MultiTurnTaskSuccessV1Evaluator, 0.6).evaluate_invocations(
        conversation, None, SCENARIO
    )
    first, last = result.per_invocation_results
    assert first.eval_status == EvalStatus.NOT_EVALUATED and first.score is None
    assert last.score == pytest.approx(2 / 3)
    assert result.overall_score == pytest.approx(2 / 3)
    assert result.overall_eval_status == EvalStatus.PASSED  # 0.667 >= 0.6
    # As the Vertex AI facade: the last turn's verdicts are the overall ones, rationale kept.
    assert result.overall_rubric_scores == last.rubric_scores
    assert [(s.rubric_id, s.score, s.rationale) for s in result.overall_rubric_scores or []] == [
        ("goal_achieved", 1.0, "Turn 1 shows it."),
        ("every_request_handled", 1.0, "Turn 1 shows it."),
        ("outcome_reported_truthfully", 0.0, "Turn 1 shows it."),
    ]
    prompt = prompt_of(judges.requests[0])
    assert "The user's plan: Get the weather for Paris, then for Rome." in prompt
    assert "USER TURN 2: Weather in Rome?" in prompt
    assert "calls_tool" not in prompt  # the case's rubrics are not these metrics'


@pytest.mark.parametrize(
    "cls", [MultiTurnTrajectoryQualityV1Evaluator, MultiTurnToolUseQualityV1Evaluator]
)
async def test_quality_metrics_judge_their_own_properties(
    judges: ScriptedJudges, cls: type[_MultiTurnJudge]
) -> None:
    rubrics = cls.BUILT_IN_RUBRICS
    judges.add(JUDGE, blocks(*[(r, "yes") for r in rubrics]))
    result = await multi_turn(cls, 1.0).evaluate_invocations(
        [weather_turn("Paris", "Paris is sunny, 18°C.")]
    )
    assert result.overall_score == 1.0 and result.overall_eval_status == EvalStatus.PASSED
    assert [s.rubric_id for s in result.overall_rubric_scores or []] == [
        r.rubric_id for r in rubrics
    ]
    for r in rubrics:
        assert f'"id": "{r.rubric_id}"' in prompt_of(judges.requests[0])


async def test_a_failing_multi_turn_judge_gives_a_not_evaluated_case_that_says_why(
    judges: ScriptedJudges,
) -> None:
    judges.add(JUDGE, TimeoutError("judge timed out"))
    result = await multi_turn(MultiTurnTaskSuccessV1Evaluator, 0.5).evaluate_invocations(
        [weather_turn("Paris", "Sunny.")]
    )
    assert result.overall_score is None
    assert result.overall_eval_status == EvalStatus.NOT_EVALUATED
    (error,) = result.overall_rubric_scores or []
    assert error.rubric_id == "error" and "TimeoutError: judge timed out" in (error.rationale or "")


async def test_a_conversation_with_no_invocations_is_not_evaluated(
    judges: ScriptedJudges,
) -> None:
    judges.add(JUDGE)
    result = await multi_turn(MultiTurnToolUseQualityV1Evaluator, 0.5).evaluate_invocations([])
    assert result.overall_eval_status == EvalStatus.NOT_EVALUATED
    assert judges.requests == []


# --- hallucinations_v1 ----------------------------------------------------------------------


def validator_reply(*labels: tuple[str, str]) -> str:
    return "\n".join(
        f"sentence: {sentence}\nlabel: {label}\nrationale: Checked against the tool output.\n"
        f"supporting_excerpt: {'null' if label != 'supported' else 'celsius: 18'}\n"
        "contradicting_excerpt: null"
        for sentence, label in labels
    )


FINAL = "Paris is sunny and 18°C. It will snow tomorrow. Have a nice day!"
FINAL_SENTENCES = ["Paris is sunny and 18°C.", "It will snow tomorrow.", "Have a nice day!"]


def hallucinations(threshold: float, intermediate: bool) -> HallucinationsV1Evaluator:
    criterion = HallucinationsCriterion(
        threshold=threshold,
        judge_model_options=options(),
        evaluate_intermediate_nl_responses=intermediate,
    )
    return HallucinationsV1Evaluator(
        EvalMetric(metric_name="hallucinations_v1", criterion=criterion)
    )


async def test_hallucinations_scores_the_supported_share_of_each_response(
    judges: ScriptedJudges,
) -> None:
    judges.add(
        JUDGE,
        "<sentence>Let me check the weather.</sentence>",
        validator_reply(("Let me check the weather.", "not_applicable")),
        "\n".join(f"<sentence>{s}</sentence>" for s in FINAL_SENTENCES),
        validator_reply(
            (FINAL_SENTENCES[0], "supported"),
            (FINAL_SENTENCES[1], "unsupported"),
            (FINAL_SENTENCES[2], "not_applicable"),
        ),
    )
    invocation = weather_turn("Paris", FINAL, said_first="Let me check the weather.")
    result = await hallucinations(0.8, intermediate=True).evaluate_invocations([invocation])
    # The intermediate text scores 1; the final response 2 of 3; the invocation their mean.
    assert result.overall_score == pytest.approx((1 + 2 / 3) / 2)
    assert result.overall_eval_status == EvalStatus.PASSED  # 0.833 >= 0.8

    segment_1, validate_1, segment_2, validate_2 = map(prompt_of, judges.requests)
    assert "Let me check the weather." in segment_1
    assert FINAL in segment_2
    assert "<sentence>It will snow tomorrow.</sentence>" in validate_2
    # The final response is checked against the tool's output; the first text came before it.
    assert '"celsius": 18' in validate_2 and "tool_outputs:" in validate_2
    assert "tool_outputs:" not in validate_1
    assert "Answer weather questions; always call get_weather." in validate_1
    assert "User prompt:\nWeather in Paris?" in validate_1


async def test_hallucinations_checks_only_the_final_response_by_default(
    judges: ScriptedJudges,
) -> None:
    judges.add(
        JUDGE,
        "\n".join(f"<sentence>{s}</sentence>" for s in FINAL_SENTENCES),
        validator_reply(
            (FINAL_SENTENCES[0], "supported"),
            (FINAL_SENTENCES[1], "contradictory"),
            (FINAL_SENTENCES[2], "disputed"),
        ),
    )
    invocation = weather_turn("Paris", FINAL, said_first="Let me check the weather.")
    result = await hallucinations(0.5, intermediate=False).evaluate_invocations([invocation])
    assert len(judges.requests) == 2
    assert result.overall_score == pytest.approx(1 / 3)
    assert result.overall_eval_status == EvalStatus.FAILED


async def test_a_failing_segmenter_leaves_the_invocation_not_evaluated_with_the_reason(
    judges: ScriptedJudges,
) -> None:
    judges.add(
        JUDGE,
        RuntimeError("503 UNAVAILABLE"),
        "<sentence>Rome is sunny.</sentence>",
        "I could not decide.",  # a validator reply with no blocks
    )
    result = await hallucinations(0.5, intermediate=False).evaluate_invocations(
        [weather_turn("Paris", "Paris is sunny."), weather_turn("Rome", "Rome is sunny.")]
    )
    paris, rome = result.per_invocation_results
    assert paris.score is None and paris.eval_status == EvalStatus.NOT_EVALUATED
    assert "segmenter call" in ((paris.rubric_scores or [])[0].rationale or "")
    assert "503 UNAVAILABLE" in ((paris.rubric_scores or [])[0].rationale or "")
    assert rome.score is None and rome.eval_status == EvalStatus.NOT_EVALUATED
    assert result.overall_score is None
    assert result.overall_eval_status == EvalStatus.NOT_EVALUATED
