"""``per_turn_user_simulator_quality_v1``: did the simulated user keep to its scenario?

The first user message must be the scenario's starting prompt (checked exactly, no model).
A judge model rates every later user message against the plan, the persona and the
conversation before it (``num_samples`` times, majority vote), and finally whether the
conversation ended when it should: a judge that says the stop signal was due earlier, or
not yet, fails the last user turn. The score is the fraction of user turns that pass.
"""

from __future__ import annotations

import contextlib
import enum
import re
from typing import ClassVar

from google.genai import types as genai_types
from pydantic import ValidationError
from typing_extensions import override

from cairn.models.base_llm import BaseLlm
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.models.registry import LLMRegistry

from ..eval_case import ConversationScenario, Invocation
from ..eval_metrics import EvalMetric, EvalStatus, LlmBackedUserSimulatorCriterion
from ..evaluator import EvaluationResult, Evaluator, PerInvocationResult
from .per_turn_user_simulator_quality_prompts import get_per_turn_user_simulator_quality_prompt


class _Verdict(enum.Enum):
    VALID = "valid"
    INVALID = "invalid"
    NOT_FOUND = "not found"


_IS_VALID = re.compile(r'"is_valid"\s*:\s*\[?\s*"?([^",\]}\n]*)', re.IGNORECASE)
_PASSING = {"true", "valid"}
_FAILING = {"false", "invalid", "almost", "partially", "partially valid", "partially_valid"}


def _verdict(judge_text: str) -> _Verdict:
    """The judge's ``"is_valid"`` answer (true/valid, or false/invalid/almost/partially)."""
    found = _IS_VALID.search(judge_text)
    if found is None:
        return _Verdict.NOT_FOUND
    label = found.group(1).strip().lower()
    if label in _PASSING:
        return _Verdict.VALID
    if label in _FAILING:
        return _Verdict.INVALID
    return _Verdict.NOT_FOUND


def _text(content: genai_types.Content | None) -> str | None:
    if content is None or not content.parts:
        return None
    texts = [part.text for part in content.parts if part.text and not part.thought]
    return "\n".join(texts) if texts else None


def _status(score: float | None, threshold: float) -> EvalStatus:
    if score is None:
        return EvalStatus.NOT_EVALUATED
    return EvalStatus.PASSED if score >= threshold else EvalStatus.FAILED


def _conversation(invocations: list[Invocation]) -> str:
    lines: list[str] = []
    for invocation in invocations:
        user_text = _text(invocation.user_content)
        if user_text is not None:
            lines.append(f"user: {user_text}")
        if invocation.final_response is not None:
            role = invocation.final_response.role or "model"
            lines.append(f"{role}: {_text(invocation.final_response) or ''}")
    return "\n\n".join(lines)


class PerTurnUserSimulatorQualityV1(Evaluator):
    """Judges each message of a model-driven simulated user against its scenario."""

    criterion_type: ClassVar[type[LlmBackedUserSimulatorCriterion]] = (
        LlmBackedUserSimulatorCriterion
    )

    def __init__(self, eval_metric: EvalMetric) -> None:
        self._eval_metric = eval_metric
        self._criterion = self._deserialize_criterion(eval_metric)
        self._llm_options = self._criterion.judge_model_options
        self._llm_config = (
            self._llm_options.judge_model_config.model_copy(deep=True)
            if self._llm_options.judge_model_config is not None
            else genai_types.GenerateContentConfig()
        )
        self._stop_signal = self._criterion.stop_signal
        self._llm: BaseLlm = LLMRegistry.new_llm(self._llm_options.judge_model)

    def _deserialize_criterion(self, eval_metric: EvalMetric) -> LlmBackedUserSimulatorCriterion:
        problem = f"`{eval_metric.metric_name}` needs a criterion with a threshold"
        if eval_metric.criterion is not None:
            try:
                return self.criterion_type.model_validate(eval_metric.criterion.model_dump())
            except ValidationError as error:
                problem = f"`{eval_metric.metric_name}`'s criterion is invalid ({error})"
        raise ValueError(
            f'{problem}; give it as a threshold or as {{"threshold": 0.8, '
            '"judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 5}, '
            '"stop_signal": "</finished>"}.'
        )

    @override
    async def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult:
        """Scores the simulated user's messages in ``actual_invocations`` (expected
        invocations are not read); ValueError without a conversation scenario."""
        del expected_invocations
        if conversation_scenario is None:
            raise ValueError(
                "per_turn_user_simulator_quality_v1 judges a simulated user, so it needs the "
                "eval case's conversation_scenario; use it only on cases that have one."
            )
        if not actual_invocations:
            return EvaluationResult()
        results = [self._evaluate_first_turn(actual_invocations[0], conversation_scenario)]
        for index in range(1, len(actual_invocations)):
            results.append(
                await self._evaluate_intermediate_turn(
                    invocation_at_step=actual_invocations[index],
                    invocation_history=actual_invocations[:index],
                    conversation_scenario=conversation_scenario,
                )
            )
        # Should the conversation have ended where it did? A no fails the last user turn.
        ending = await self._evaluate_intermediate_turn(
            invocation_at_step=Invocation(
                invocation_id="stop_signal_proxy_invocation",
                user_content=genai_types.Content(
                    role="user", parts=[genai_types.Part(text=self._stop_signal)]
                ),
            ),
            invocation_history=actual_invocations,
            conversation_scenario=conversation_scenario,
        )
        if ending.eval_status == EvalStatus.FAILED:
            results[-1] = ending
        return self._aggregate_conversation_results(results)

    def _evaluate_first_turn(
        self, first_invocation: Invocation, conversation_scenario: ConversationScenario
    ) -> PerInvocationResult:
        user_text = _text(first_invocation.user_content)
        if user_text is None:
            return PerInvocationResult(actual_invocation=first_invocation)
        score = float(user_text.strip() == conversation_scenario.starting_prompt.strip())
        return PerInvocationResult(
            actual_invocation=first_invocation,
            score=score,
            eval_status=_status(score, self._criterion.threshold),
        )

    async def _evaluate_intermediate_turn(
        self,
        invocation_at_step: Invocation,
        invocation_history: list[Invocation],
        conversation_scenario: ConversationScenario,
    ) -> PerInvocationResult:
        prompt = get_per_turn_user_simulator_quality_prompt(
            conversation_plan=conversation_scenario.conversation_plan,
            conversation_history=_conversation(invocation_history),
            generated_user_response=_text(invocation_at_step.user_content) or "",
            stop_signal=self._stop_signal,
            user_persona=conversation_scenario.user_persona,
        )
        samples: list[PerInvocationResult] = []
        for _ in range(self._llm_options.num_samples):
            request = LlmRequest(
                model=self._llm_options.judge_model,
                contents=[genai_types.Content(role="user", parts=[genai_types.Part(text=prompt)])],
                config=self._llm_config.model_copy(deep=True),
            )
            score = await self._sample_llm(request)
            samples.append(
                PerInvocationResult(
                    actual_invocation=invocation_at_step,
                    score=score,
                    eval_status=_status(score, self._criterion.threshold),
                )
            )
        return self._aggregate_samples(samples)

    async def _sample_llm(self, llm_request: LlmRequest) -> float | None:
        """1.0 when the judge says valid, 0.0 when invalid, None when it says neither."""
        async with contextlib.aclosing(self._llm.generate_content_async(llm_request)) as replies:
            async for reply in replies:
                return self._convert_llm_response_to_score(reply)
        return None

    @staticmethod
    def _convert_llm_response_to_score(auto_rater_response: LlmResponse) -> float | None:
        verdict = _verdict(_text(auto_rater_response.content) or "")
        if verdict is _Verdict.VALID:
            return 1.0
        if verdict is _Verdict.INVALID:
            return 0.0
        return None

    @staticmethod
    def _aggregate_samples(samples: list[PerInvocationResult]) -> PerInvocationResult:
        """The majority verdict; a tie fails; only unreadable verdicts: not evaluated."""
        passing = [s for s in samples if s.score == 1.0]
        failing = [s for s in samples if s.score == 0.0]
        if not passing and not failing:
            return samples[0]
        return passing[0] if len(passing) > len(failing) else failing[0]

    def _aggregate_conversation_results(
        self, per_invocation_results: list[PerInvocationResult]
    ) -> EvaluationResult:
        """The fraction of user turns that passed (turns not evaluated count as not passed)."""
        passed = sum(
            r.score or 0.0 for r in per_invocation_results if r.eval_status == EvalStatus.PASSED
        )
        score = passed / len(per_invocation_results)
        return EvaluationResult(
            overall_score=score,
            overall_eval_status=_status(score, self._criterion.threshold),
            per_invocation_results=per_invocation_results,
        )
