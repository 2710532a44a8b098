"""per_turn_user_simulator_quality_v1: a scripted judge, hand-computed scores."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.genai import types

from cairn.evaluation.conversation_scenarios import ConversationScenario
from cairn.evaluation.eval_case import Invocation
from cairn.evaluation.eval_metrics import (
    EvalMetric,
    EvalStatus,
    JudgeModelOptions,
    LlmBackedUserSimulatorCriterion,
)
from cairn.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY
from cairn.evaluation.simulation.per_turn_user_simulator_quality_prompts import (
    get_per_turn_user_simulator_quality_prompt,
)
from cairn.evaluation.simulation.per_turn_user_simulator_quality_v1 import (
    PerTurnUserSimulatorQualityV1,
)
from cairn.evaluation.simulation.pre_built_personas import get_default_persona_registry
from cairn.models import LLMRegistry, LlmRequest
from cairn.testing import ScriptedLlm

METRIC = "per_turn_user_simulator_quality_v1"
PLAN = "Ask for the weather in Paris, then stop."
START = "Hi, I have a question."
SCENARIO = ConversationScenario(starting_prompt=START, conversation_plan=PLAN)
VALID = '{"criteria": [], "is_valid": true}'
INVALID = '{"criteria": [{"name": "X", "reasoning": "r", "passes": false}], "is_valid": false}'


def turn(user: str, agent: str | None = None) -> Invocation:
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text=user)]),
        final_response=types.Content(role="model", parts=[types.Part(text=agent)])
        if agent
        else None,
    )


CONVERSATION = [
    turn(START, "Sure, what is it?"),
    turn("What is the weather in Paris?", "Sunny, 20 degrees."),
    turn("Great, thanks! </finished>"),
]


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Callable[..., list[ScriptedLlm]]:
    def register(*replies: Any) -> list[ScriptedLlm]:
        made: list[ScriptedLlm] = []

        class _Judge(ScriptedLlm):
            @classmethod
            def supported_models(cls) -> list[str]:
                return [r"scripted-judge"]

            def model_post_init(self, context: Any, /) -> None:
                self.script = list(replies)
                made.append(self)

        monkeypatch.setattr(LLMRegistry, "_registered", list(LLMRegistry._registered))
        LLMRegistry.register(_Judge)
        return made

    return register


def metric(threshold: float = 0.5, num_samples: int = 1) -> PerTurnUserSimulatorQualityV1:
    criterion = LlmBackedUserSimulatorCriterion(
        threshold=threshold,
        judge_model_options=JudgeModelOptions(
            judge_model="scripted-judge", num_samples=num_samples
        ),
    )
    return PerTurnUserSimulatorQualityV1(EvalMetric(metric_name=METRIC, criterion=criterion))


def prompt_of(request: LlmRequest) -> str:
    return "".join(p.text or "" for p in request.contents[0].parts or [])


async def test_majority_votes_per_turn_and_the_fraction_of_valid_turns(
    judge: Callable[..., list[ScriptedLlm]],
) -> None:
    # Turn 2: valid, invalid, valid -> passes. Turn 3: invalid, valid, invalid -> fails.
    # The ending check: valid x3 -> the conversation ended in time, nothing replaced.
    judges = judge(VALID, INVALID, VALID, INVALID, VALID, INVALID, VALID, VALID, VALID)
    result = await metric(threshold=0.6, num_samples=3).evaluate_invocations(
        CONVERSATION, conversation_scenario=SCENARIO
    )
    assert [r.score for r in result.per_invocation_results] == [1.0, 1.0, 0.0]
    assert [r.eval_status for r in result.per_invocation_results] == [
        EvalStatus.PASSED,
        EvalStatus.PASSED,
        EvalStatus.FAILED,
    ]
    assert result.overall_score == pytest.approx(2 / 3)
    assert result.overall_eval_status == EvalStatus.PASSED  # 0.667 >= 0.6
    assert len(judges[0].requests) == 9

    second, third, ending = (prompt_of(judges[0].requests[i]) for i in (0, 3, 6))
    assert PLAN in second and "</finished>" in second
    assert second.endswith("What is the weather in Paris?\n")
    assert "user: Hi, I have a question.\n\nmodel: Sure, what is it?" in second
    assert "Sunny, 20 degrees." not in second  # only the conversation before the message
    assert "model: Sunny, 20 degrees." in third and third.endswith("</finished>\n")
    # The ending check judges the stop signal after the whole conversation.
    assert "user: Great, thanks! </finished>" in ending and ending.endswith("\n</finished>\n")


async def test_an_ending_judged_wrong_fails_the_last_turn(
    judge: Callable[..., list[ScriptedLlm]],
) -> None:
    judge(VALID, VALID, INVALID)
    result = await metric().evaluate_invocations(CONVERSATION, conversation_scenario=SCENARIO)
    last = result.per_invocation_results[-1]
    assert last.score == 0.0 and last.eval_status == EvalStatus.FAILED
    assert last.actual_invocation.invocation_id == "stop_signal_proxy_invocation"
    assert result.overall_score == pytest.approx(2 / 3)


async def test_the_first_message_must_be_the_starting_prompt(
    judge: Callable[..., list[ScriptedLlm]],
) -> None:
    judge(VALID)
    result = await metric().evaluate_invocations(
        [turn("Hello there", "Hi")], conversation_scenario=SCENARIO
    )
    assert [r.score for r in result.per_invocation_results] == [0.0]
    assert result.overall_score == 0.0 and result.overall_eval_status == EvalStatus.FAILED
    result = await metric().evaluate_invocations(
        [turn(f"  {START} ", "Hi")], conversation_scenario=SCENARIO
    )
    assert result.overall_score == 1.0


async def test_an_unreadable_verdict_is_not_evaluated_and_does_not_pass(
    judge: Callable[..., list[ScriptedLlm]],
) -> None:
    judge("I cannot tell.", VALID, VALID)
    result = await metric().evaluate_invocations(CONVERSATION, conversation_scenario=SCENARIO)
    assert result.per_invocation_results[1].eval_status == EvalStatus.NOT_EVALUATED
    assert result.per_invocation_results[1].score is None
    assert result.overall_score == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ('{"is_valid": "True"}', 1.0),
        ('{"is_valid": "valid"}', 1.0),
        ('{\n  "is_valid": ["partially valid"]\n}', 0.0),
        ('{"is_valid": "almost"}', 0.0),
        ('{"is_valid": False,}', 0.0),
        ('{"is_valid": "maybe"}', None),
        ('{"valid": true}', None),
    ],
)
async def test_the_verdict_is_read_from_is_valid(
    judge: Callable[..., list[ScriptedLlm]], reply: str, score: float | None
) -> None:
    judge(reply, VALID)
    result = await metric().evaluate_invocations(CONVERSATION[:2], conversation_scenario=SCENARIO)
    assert result.per_invocation_results[1].score == score


async def test_a_persona_s_violation_rubrics_are_the_criteria(
    judge: Callable[..., list[ScriptedLlm]],
) -> None:
    judges = judge(VALID, VALID)
    scenario = ConversationScenario(
        starting_prompt=START, conversation_plan=PLAN, user_persona="EXPERT"
    )
    await metric().evaluate_invocations(CONVERSATION[:2], conversation_scenario=scenario)
    prompt = prompt_of(judges[0].requests[0])
    expert = get_default_persona_registry().get_persona("EXPERT")
    assert expert.description in prompt
    for behavior in expert.behaviors:
        for rubric in behavior.violation_rubrics:
            assert rubric.replace("{{ stop_signal }}", "</finished>") in prompt
    assert "{{" not in prompt


def test_the_prompt_without_persona_asks_for_is_valid() -> None:
    prompt = get_per_turn_user_simulator_quality_prompt(
        conversation_plan=PLAN,
        conversation_history="user: hi",
        generated_user_response="the {{ candidate }}",
        stop_signal="<stop>",
    )
    assert '"is_valid"' in prompt and "`<stop>`" in prompt
    assert prompt.endswith("# Candidate Message\n\nthe {{ candidate }}\n")  # not re-rendered


async def test_a_conversation_scenario_is_required(
    judge: Callable[..., list[ScriptedLlm]],
) -> None:
    judge()
    with pytest.raises(ValueError, match="conversation_scenario"):
        await metric().evaluate_invocations(CONVERSATION)


def test_the_metric_is_registered_with_its_info(
    judge: Callable[..., list[ScriptedLlm]],
) -> None:
    judge()
    infos = {i.metric_name: i for i in DEFAULT_METRIC_EVALUATOR_REGISTRY.get_registered_metrics()}
    interval = infos[METRIC].metric_value_info.interval
    assert interval is not None and (interval.min_value, interval.max_value) == (0.0, 1.0)
    criterion = LlmBackedUserSimulatorCriterion(
        threshold=0.8, judge_model_options=JudgeModelOptions(judge_model="scripted-judge")
    )
    evaluator = DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(
        EvalMetric(metric_name=METRIC, criterion=criterion)
    )
    assert isinstance(evaluator, PerTurnUserSimulatorQualityV1)


def test_a_metric_without_a_criterion_is_refused() -> None:
    with pytest.raises(ValueError, match="needs a criterion with a threshold"):
        PerTurnUserSimulatorQualityV1(EvalMetric(metric_name=METRIC))


async def test_a_tied_vote_fails_the_turn(judge: Callable[..., list[ScriptedLlm]]) -> None:
    judge(VALID, INVALID, VALID, VALID)
    result = await metric(num_samples=2).evaluate_invocations(
        CONVERSATION[:2], conversation_scenario=SCENARIO
    )
    assert [r.score for r in result.per_invocation_results] == [1.0, 0.0]
    assert result.overall_score == 0.5
