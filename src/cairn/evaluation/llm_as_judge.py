"""LlmAsJudge: the base of the metrics a model judges.

A subclass writes the judge's prompt for an invocation, reads a score out of the judge's
reply, combines the samples of one invocation, and combines the invocations of a case. The
base asks the judge ``num_samples`` times per invocation (at most ``parallelism_limit`` calls
at once). An invocation whose judge call failed, or whose replies could not be read, is
NOT_EVALUATED with no score, and carries a rubric score ``error`` that says why; the rest of
the case is still judged.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from abc import abstractmethod
from typing import Generic, TypeVar

from pydantic import ValidationError
from typing_extensions import override

from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse

from .common import EvalBaseModel
from .eval_case import ConversationScenario, Invocation
from .eval_metrics import (
    BaseCriterion,
    EvalMetric,
    EvalStatus,
    LlmAsAJudgeCriterion,
    RubricsBasedCriterion,
    RubricScore,
    _get_metric_threshold,
)
from .evaluator import (
    EvaluationResult,
    Evaluator,
    PerInvocationResult,
    _validate_invocation_lengths,
)
from .llm_as_judge_utils import (
    _ask_judge,
    _judge_request,
    _new_judge_model,
    build_judge_request_config,
    get_eval_status,
    get_text_from_content,
)

logger = logging.getLogger(__name__)

_ERROR_RUBRIC_ID = "error"
"""The id of the rubric score that says why an invocation was not evaluated."""

_QUOTED_REPLY_CHARS = 300


class AutoRaterScore(EvalBaseModel):
    """What one judge reply says: a score, and per-rubric scores for rubric metrics."""

    score: float | None = None
    rubric_scores: list[RubricScore] | None = None


_CriterionT = TypeVar("_CriterionT", LlmAsAJudgeCriterion, RubricsBasedCriterion)
_AnyCriterionT = TypeVar("_AnyCriterionT", bound=BaseCriterion)


@dataclasses.dataclass(frozen=True)
class _Sample:
    result: PerInvocationResult
    reply: str | None


def _error_score(reason: str) -> RubricScore:
    return RubricScore(rubric_id=_ERROR_RUBRIC_ID, rationale=reason, score=None)


class LlmAsJudge(Evaluator, Generic[_CriterionT]):
    """A metric a judge model scores; subclasses supply the prompt, the reply parser and the
    two aggregations."""

    def __init__(
        self,
        eval_metric: EvalMetric,
        criterion_type: type[_CriterionT],
        expected_invocations_required: bool = False,
    ) -> None:
        self._eval_metric = eval_metric
        self._expected_invocations_required = expected_invocations_required
        self._criterion: _CriterionT = _read_criterion(eval_metric, criterion_type)
        self._judge_model_options = self._criterion.judge_model_options
        self._judge_model_config = build_judge_request_config(
            self._judge_model_options.judge_model_config
        )
        self._threshold = _get_metric_threshold(eval_metric)
        self._judge_model = _new_judge_model(self._judge_model_options)

    @abstractmethod
    def format_auto_rater_prompt(self, actual: Invocation, expected: Invocation | None) -> str:
        """The judge's prompt for this invocation."""

    @abstractmethod
    def convert_auto_rater_response_to_score(
        self, auto_rater_response: LlmResponse
    ) -> AutoRaterScore:
        """The score in one judge reply (score None when the reply cannot be read)."""

    @abstractmethod
    def aggregate_per_invocation_samples(
        self, per_invocation_samples: list[PerInvocationResult]
    ) -> PerInvocationResult:
        """One result for an invocation out of its samples."""

    @abstractmethod
    def aggregate_invocation_results(
        self, per_invocation_results: list[PerInvocationResult]
    ) -> EvaluationResult:
        """The case's result out of its invocations' results."""

    def _invocation_context(self) -> object:
        """State the prompt just formatted needs again to read the replies (none here)."""
        return None

    def _use_invocation_context(self, context: object) -> None:
        """Restores what ``_invocation_context`` returned, before a reply is read."""

    async def _evaluate_single_sample(
        self,
        llm_request: LlmRequest,
        actual: Invocation,
        expected: Invocation | None,
        context: object = None,
    ) -> _Sample:
        response = await _ask_judge(self._judge_model, llm_request)
        # Reading the reply is synchronous, so no other sample's context can come between.
        self._use_invocation_context(context)
        rated = self.convert_auto_rater_response_to_score(response)
        result = PerInvocationResult(
            actual_invocation=actual,
            expected_invocation=expected,
            score=rated.score,
            eval_status=get_eval_status(rated.score, self._threshold),
            rubric_scores=rated.rubric_scores,
        )
        return _Sample(result=result, reply=get_text_from_content(response.content))

    @override
    async def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult:
        if self._expected_invocations_required and expected_invocations is None:
            raise ValueError(
                f"`{self._eval_metric.metric_name}` compares with expected invocations, and "
                "none were given; use it on eval cases with a `conversation` whose "
                "invocations have final responses."
            )
        _validate_invocation_lengths(actual_invocations, expected_invocations)
        expected_list: list[Invocation | None] = (
            [None] * len(actual_invocations)
            if expected_invocations is None
            else list(expected_invocations)
        )
        semaphore = asyncio.Semaphore(self._judge_model_options.parallelism_limit)

        async def sample(
            request: LlmRequest, actual: Invocation, expected: Invocation | None, context: object
        ) -> _Sample:
            async with semaphore:
                return await self._evaluate_single_sample(request, actual, expected, context)

        jobs = []
        owners: list[int] = []
        for index, (actual, expected) in enumerate(
            zip(actual_invocations, expected_list, strict=True)
        ):
            prompt = self.format_auto_rater_prompt(actual, expected)
            context = self._invocation_context()
            request = _judge_request(self._judge_model_options, self._judge_model_config, prompt)
            for _ in range(self._judge_model_options.num_samples):
                jobs.append(sample(request, actual, expected, context))
                owners.append(index)
        outcomes = await asyncio.gather(*jobs, return_exceptions=True)

        by_invocation: dict[int, list[_Sample | BaseException]] = {}
        for index, outcome in zip(owners, outcomes, strict=True):
            by_invocation.setdefault(index, []).append(outcome)
        results = [
            self._invocation_result(actual_invocations[i], expected_list[i], i, by_invocation[i])
            for i in sorted(by_invocation)
        ]
        if not results:
            return EvaluationResult()
        return self.aggregate_invocation_results(results)

    def _invocation_result(
        self,
        actual: Invocation,
        expected: Invocation | None,
        index: int,
        outcomes: list[_Sample | BaseException],
    ) -> PerInvocationResult:
        failures = [o for o in outcomes if isinstance(o, BaseException)]
        if failures:
            error = failures[0]
            logger.warning(
                "Metric %s: the judge model %s failed on invocation %d (%s); the invocation "
                "is not evaluated.",
                self._eval_metric.metric_name,
                self._judge_model_options.judge_model,
                index,
                error,
                exc_info=error,
            )
            return PerInvocationResult(
                actual_invocation=actual,
                expected_invocation=expected,
                score=None,
                eval_status=EvalStatus.NOT_EVALUATED,
                rubric_scores=[
                    _error_score(
                        f"The judge model `{self._judge_model_options.judge_model}` failed "
                        f"({len(failures)} of {len(outcomes)} samples): "
                        f"{type(error).__name__}: {error}"
                    )
                ],
            )
        samples = [o for o in outcomes if isinstance(o, _Sample)]
        aggregated: PerInvocationResult = self.aggregate_per_invocation_samples(
            [s.result for s in samples]
        )
        if aggregated.score is None:
            reply = next((s.reply for s in samples if s.reply), None)
            quoted = repr(reply[:_QUOTED_REPLY_CHARS]) if reply else "an empty reply"
            logger.warning(
                "Metric %s: no verdict could be read from the judge's replies on invocation "
                "%d; the invocation is not evaluated. A reply: %s",
                self._eval_metric.metric_name,
                index,
                quoted,
            )
            reason = (
                f"No verdict could be read from the replies of judge model "
                f"`{self._judge_model_options.judge_model}` ({len(samples)} samples); "
                f"a reply: {quoted}"
            )
            aggregated = aggregated.model_copy(
                update={
                    "eval_status": EvalStatus.NOT_EVALUATED,
                    "rubric_scores": [*(aggregated.rubric_scores or []), _error_score(reason)],
                }
            )
        return aggregated


def _read_criterion(
    eval_metric: EvalMetric, criterion_type: type[_AnyCriterionT]
) -> _AnyCriterionT:
    """The metric's criterion as ``criterion_type`` (a bare threshold gives the defaults)."""
    problem = (
        f"Metric `{eval_metric.metric_name}` needs a criterion of type "
        f"{criterion_type.__name__}, e.g. "
        f'"criteria": {{"{eval_metric.metric_name}": {{"threshold": 0.8, '
        '"judge_model_options": {"judge_model": "gemini-2.5-flash", "num_samples": 5}}}'
    )
    criterion = eval_metric.criterion
    if criterion is None:
        if eval_metric.threshold is None:
            raise ValueError(problem + "; it has none.")
        return criterion_type(threshold=eval_metric.threshold)
    try:
        return criterion_type.model_validate(criterion.model_dump())
    except ValidationError as error:
        raise ValueError(f"{problem}; its criterion does not fit: {error}") from error
