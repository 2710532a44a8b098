"""RubricBasedEvaluator: the base of metrics where a judge gives a yes/no verdict per rubric.

The rubrics judged for an invocation are the criterion's, then the invocation's own (only
those of the metric's rubric type, when it has one); two rubrics with one id are an error.
A judge reply lists, per rubric, ``ID:``, ``Property:``, ``Rationale:`` and ``Verdict:`` lines;
"yes" scores 1 and "no" 0. Samples of an invocation are combined by majority vote per rubric,
and the invocation's score is the mean of its rubric scores; the case's score is the mean of
every rubric score of every invocation, with a mean per rubric id beside it.
"""

from __future__ import annotations

import abc
import logging
import re
import unicodedata

from typing_extensions import override

from cairn.models.llm_response import LlmResponse

from .common import EvalBaseModel
from .eval_metrics import EvalMetric, RubricsBasedCriterion
from .eval_rubrics import Rubric, RubricScore
from .evaluator import EvaluationResult, PerInvocationResult
from .llm_as_judge import AutoRaterScore, LlmAsJudge
from .llm_as_judge_utils import get_average_rubric_score, get_eval_status, get_text_from_content

logger = logging.getLogger(__name__)


class RubricResponse(EvalBaseModel):
    """The judge's answer on one rubric, as read from its reply."""

    rubric_id: str | None = None
    property_text: str | None = None
    rationale: str | None = None
    score: float | None = None


class AutoRaterResponseParser(abc.ABC):
    """Reads the per-rubric answers out of a judge's reply."""

    @abc.abstractmethod
    def parse(self, auto_rater_response: str) -> list[RubricResponse]:
        """The rubric answers in the reply (an empty list when it cannot be read)."""


_ID_LINE = re.compile(r"^[ \t]*ID:[ \t]?(.*)$", re.MULTILINE)
_PROPERTY_LINE = re.compile(r"^[ \t]*Property:[ \t]?(.*)$", re.MULTILINE)
_RATIONALE = re.compile(r"Rationale:[ \t]?(.*)")
_VERDICT = re.compile(r"Verdict:[ \t]?(.*)")


def _verdict_score(verdict: str) -> float | None:
    lowered = verdict.lower()
    if "yes" in lowered:
        return 1.0
    if "no" in lowered:
        return 0.0
    return None


class DefaultAutoRaterResponseParser(AutoRaterResponseParser):
    """Reads ``ID:`` / ``Property:`` / ``Rationale:`` / ``Verdict:`` blocks.

    A reply whose property, rationale and verdict lines do not pair up is read as nothing, so
    that a rubric the judge skipped cannot go missing and raise the score. An id belongs to
    the property line it comes just before.
    """

    @override
    def parse(self, auto_rater_response: str) -> list[RubricResponse]:
        properties = list(_PROPERTY_LINE.finditer(auto_rater_response))
        ids = list(_ID_LINE.finditer(auto_rater_response))
        rationales = _RATIONALE.findall(auto_rater_response)
        scores = [_verdict_score(v) for v in _VERDICT.findall(auto_rater_response)]
        if not len(properties) == len(rationales) == len(scores):
            return []
        responses = []
        for index, (prop, rationale, score) in enumerate(
            zip(properties, rationales, scores, strict=True)
        ):
            after = properties[index - 1].start() if index else -1
            rubric_id = None
            for id_match in ids:
                if after < id_match.start() < prop.start():
                    rubric_id = id_match.group(1).strip() or None
            responses.append(
                RubricResponse(
                    rubric_id=rubric_id,
                    property_text=prop.group(1).strip(),
                    rationale=rationale.strip(),
                    score=score,
                )
            )
        return responses


class PerInvocationResultsAggregator(abc.ABC):
    """Combines the judge's samples on one invocation into one result."""

    @abc.abstractmethod
    def aggregate(
        self, per_invocation_samples: list[PerInvocationResult], threshold: float
    ) -> PerInvocationResult:
        """One result out of the samples."""


class MajorityVotePerInvocationResultsAggregator(PerInvocationResultsAggregator):
    """Per rubric, the verdict most samples gave (a tie counts as "no"); a rubric no sample
    scored keeps its unscored answer. The invocation's score is the mean over rubrics."""

    @override
    def aggregate(
        self, per_invocation_samples: list[PerInvocationResult], threshold: float
    ) -> PerInvocationResult:
        unscored: dict[str, list[RubricScore]] = {}
        yes: dict[str, list[RubricScore]] = {}
        no: dict[str, list[RubricScore]] = {}
        order: list[str] = []
        for sample in per_invocation_samples:
            for rubric_score in sample.rubric_scores or []:
                rubric_id = rubric_score.rubric_id
                if rubric_id not in order:
                    order.append(rubric_id)
                    unscored[rubric_id], yes[rubric_id], no[rubric_id] = [], [], []
                if rubric_score.score is None:
                    unscored[rubric_id].append(rubric_score)
                elif rubric_score.score == 1.0:
                    yes[rubric_id].append(rubric_score)
                else:
                    no[rubric_id].append(rubric_score)
        combined = []
        for rubric_id in order:
            if not yes[rubric_id] and not no[rubric_id]:
                combined.append(unscored[rubric_id][0])
            elif len(yes[rubric_id]) > len(no[rubric_id]):
                combined.append(yes[rubric_id][0])
            else:
                combined.append(no[rubric_id][0])
        score = get_average_rubric_score(combined)
        first = per_invocation_samples[0]
        return PerInvocationResult(
            actual_invocation=first.actual_invocation,
            expected_invocation=first.expected_invocation,
            score=score,
            rubric_scores=combined,
            eval_status=get_eval_status(score, threshold),
        )


class InvocationResultsSummarizer(abc.ABC):
    """Combines the results of a case's invocations into the case's result."""

    @abc.abstractmethod
    def summarize(
        self, per_invocation_results: list[PerInvocationResult], threshold: float
    ) -> EvaluationResult:
        """The case's result."""


_AGGREGATED_RATIONALE = (
    "The mean of this rubric's scores over the case's invocations; each invocation's rubric "
    "score carries the judge's rationale."
)


class MeanInvocationResultsSummarizer(InvocationResultsSummarizer):
    """The case's score is the mean of all rubric scores of all invocations; each rubric id
    also gets the mean of its scores across invocations."""

    @override
    def summarize(
        self, per_invocation_results: list[PerInvocationResult], threshold: float
    ) -> EvaluationResult:
        every: list[RubricScore] = []
        by_id: dict[str, list[RubricScore]] = {}
        for result in per_invocation_results:
            for rubric_score in result.rubric_scores or []:
                by_id.setdefault(rubric_score.rubric_id, []).append(rubric_score)
                every.append(rubric_score)
        per_rubric = [
            RubricScore(
                rubric_id=rubric_id,
                score=get_average_rubric_score(scores),
                rationale=_AGGREGATED_RATIONALE,
            )
            for rubric_id, scores in by_id.items()
        ]
        score = get_average_rubric_score(every)
        return EvaluationResult(
            overall_score=score,
            overall_eval_status=get_eval_status(score, threshold),
            per_invocation_results=per_invocation_results,
            overall_rubric_scores=per_rubric,
        )


_TYPOGRAPHIC = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"}
)
_DECORATION = " *_`#>-\u2022\"'"
_SPACES = re.compile(r"\s+")


def _normalize_text(text: object) -> str:
    """Rubric text compared loosely: NFKC, plain quotes and dashes, single spaces, markdown
    decoration stripped from the ends, lower case (judges decorate the text they echo)."""
    if not isinstance(text, str):
        return ""
    plain = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHIC)
    return _SPACES.sub(" ", plain).strip(_DECORATION).lower()


def _rubric_list_text(rubrics: list[Rubric]) -> str:
    """The rubrics as the judge prompts list them: one ``[id: ...]``-tagged line each."""
    return "\n".join(f"*  [id: {r.rubric_id}] {r.rubric_content.text_property}" for r in rubrics)


class RubricBasedEvaluator(LlmAsJudge[RubricsBasedCriterion]):
    """A metric judged rubric by rubric; subclasses write the prompt and call
    ``create_effective_rubrics_list`` with the invocation's rubrics while doing so."""

    def __init__(
        self,
        eval_metric: EvalMetric,
        criterion_type: type[RubricsBasedCriterion],
        auto_rater_response_parser: AutoRaterResponseParser | None = None,
        per_invocation_results_aggregator: PerInvocationResultsAggregator | None = None,
        invocation_results_summarizer: InvocationResultsSummarizer | None = None,
        rubric_type: str | None = None,
    ) -> None:
        super().__init__(eval_metric, criterion_type=criterion_type)
        self._rubric_type = rubric_type
        self._auto_rater_prompt_template = ""
        self._auto_rater_response_parser = (
            auto_rater_response_parser or DefaultAutoRaterResponseParser()
        )
        self._per_invocation_results_aggregator = (
            per_invocation_results_aggregator or MajorityVotePerInvocationResultsAggregator()
        )
        self._invocation_results_summarizer = (
            invocation_results_summarizer or MeanInvocationResultsSummarizer()
        )
        self._rubrics: list[Rubric] = list(self._criterion.rubrics or [])
        self._effective_rubrics_list: list[Rubric] | None = None

    def create_effective_rubrics_list(self, invocation_rubrics: list[Rubric] | None) -> None:
        """Sets the rubrics to judge: the criterion's, then the invocation's of this metric's
        rubric type. ValueError for a repeated rubric id or when there are no rubrics."""
        by_id: dict[str, Rubric] = {}

        def add(rubrics: list[Rubric], where: str) -> None:
            for rubric in rubrics:
                if rubric.rubric_id in by_id:
                    raise ValueError(
                        f"Rubric id `{rubric.rubric_id}` is used twice (again in the {where}); "
                        "give every rubric of the criterion, the eval case and the invocation "
                        "its own id."
                    )
                by_id[rubric.rubric_id] = rubric

        add(self._rubrics, "criterion")
        if invocation_rubrics:
            wanted = [
                r
                for r in invocation_rubrics
                if self._rubric_type is None or r.type == self._rubric_type
            ]
            add(wanted, "invocation")
        self._effective_rubrics_list = list(by_id.values())
        if not self._effective_rubrics_list:
            kind = f" of type {self._rubric_type}" if self._rubric_type else ""
            raise ValueError(
                f"Metric `{self._eval_metric.metric_name}` has no rubrics to judge; give it "
                f'some in its criterion ("rubrics": [{{"rubric_id": "...", "rubric_content": '
                f'{{"text_property": "..."}}}}]) or give the eval case rubrics{kind}.'
            )

    def get_effective_rubrics_list(self) -> list[Rubric]:
        """The rubrics set by the last ``create_effective_rubrics_list``."""
        if self._effective_rubrics_list is None:
            raise ValueError(
                "No rubrics were chosen yet; call create_effective_rubrics_list() first."
            )
        return self._effective_rubrics_list

    @override
    def _invocation_context(self) -> object:
        return self._effective_rubrics_list

    @override
    def _use_invocation_context(self, context: object) -> None:
        if isinstance(context, list):
            self._effective_rubrics_list = context

    @override
    def convert_auto_rater_response_to_score(
        self, auto_rater_response: LlmResponse
    ) -> AutoRaterScore:
        """Rubric scores for the answers that name a rubric being judged (by id, else by its
        text); the score is their mean."""
        text = get_text_from_content(auto_rater_response.content)
        answers = self._auto_rater_response_parser.parse(text) if text else []
        if not answers:
            logger.warning(
                "Metric %s: no rubric verdicts could be read from the judge's reply: %r",
                self._eval_metric.metric_name,
                text,
            )
        rubrics = self.get_effective_rubrics_list()
        by_id = {r.rubric_id: r for r in rubrics}
        by_text = {_normalize_text(r.rubric_content.text_property): r for r in rubrics}
        rubric_scores = []
        for answer in answers:
            rubric = by_id.get(answer.rubric_id) if answer.rubric_id else None
            if rubric is None:
                rubric = by_text.get(_normalize_text(answer.property_text))
            if rubric is None:
                logger.warning(
                    "Metric %s: the judge answered on a rubric it was not given: %r",
                    self._eval_metric.metric_name,
                    answer.property_text,
                )
                continue
            rubric_scores.append(
                RubricScore(
                    rubric_id=rubric.rubric_id, rationale=answer.rationale, score=answer.score
                )
            )
        return AutoRaterScore(
            score=get_average_rubric_score(rubric_scores), rubric_scores=rubric_scores
        )

    @override
    def aggregate_per_invocation_samples(
        self, per_invocation_samples: list[PerInvocationResult]
    ) -> PerInvocationResult:
        return self._per_invocation_results_aggregator.aggregate(
            per_invocation_samples, self._threshold
        )

    @override
    def aggregate_invocation_results(
        self, per_invocation_results: list[PerInvocationResult]
    ) -> EvaluationResult:
        return self._invocation_results_summarizer.summarize(
            per_invocation_results, self._threshold
        )
