"""``final_response_match_v2``: a judge model decides whether the agent's final response is a
valid answer, given the expected (reference) response.

Each sample is 1 (valid) or 0 (invalid); an invocation's samples are combined by majority vote
(a tie counts as invalid); the case's score is the fraction of judged invocations that are
valid, in [0, 1].
"""

from __future__ import annotations

import logging
import re
from typing import ClassVar

from typing_extensions import override

from cairn.models.llm_response import LlmResponse

from .eval_case import Invocation
from .eval_metrics import EvalMetric, LlmAsAJudgeCriterion
from .evaluator import EvaluationResult, PerInvocationResult
from .llm_as_judge import AutoRaterScore, LlmAsJudge
from .llm_as_judge_utils import (
    Label,
    _majority_verdict,
    _mean_of_judged,
    get_text_from_content,
)

logger = logging.getLogger(__name__)

_FINAL_RESPONSE_MATCH_V2_PROMPT = """You are grading the answer an AI agent gave to a user. \
The agent may call tools (APIs) to answer, or reply in plain language, for instance to ask \
for a missing detail or to say that it cannot do what was asked.

Decide whether the agent's response is a correct answer to the user's request. A reference \
response written by a person is given; treat it as right. The agent's response is valid when \
it conveys the same key facts or outcome as the reference, even if it is worded, ordered or \
formatted differently, or adds correct detail the reference leaves out.

Grade by these rules:
- Accept any reasonable format (a list or a sentence, "CA" or "California", 1,000,000 or \
1000000) unless the user or the tool specification asked for a particular one.
- Units matter: 10 km is not 10 miles.
- When the reference has a definite answer, an agent that says it has no access to the data \
or cannot answer is invalid.
- Do not redo calculations, date arithmetic or table lookups yourself; trust the reference's \
final answer.
- For numbers with no stated precision, accept rounding that is usual for the quantity and \
does not change the conclusion.
- For tables, check that the entities and values the user asked for can be found in the \
agent's response; ignore layout differences.

The inputs:
{{
  "User prompt": {prompt},
  "Agent response": {response},
  "Reference response": {golden_response},
}}

Answer with this JSON object and nothing else:
{{
  "reasoning": "<why the response is or is not valid>",
  "is_the_agent_response_valid": "<valid or invalid>"
}}
"""

_NEGATIVE_WORDS = frozenset(
    [Label.INVALID.value, Label.ALMOST.value, Label.FALSE.value, *Label.PARTIALLY_VALID.value]
)
_POSITIVE_WORDS = frozenset([Label.VALID.value, Label.TRUE.value])


def _label_after(key: str, text: str) -> str | None:
    """The word given as the value of the JSON-ish field ``key`` (quotes and square brackets
    around it allowed), or None when the field is missing. Case matters, as in ADK."""
    match = re.search(rf'"{key}"\s*:\s*\[*\s*"*([^"\]\s,}}]*)"*\s*\]*\s*[,\n}}]', text)
    return None if match is None else match.group(1).strip()


def _parse_critique(response: str) -> Label:
    """VALID, INVALID or NOT_FOUND, from the judge's ``is_the_agent_response_valid`` field (or
    a judge that wrote the field as ``is_the_agent_response_invalid``)."""
    word = _label_after("is_the_agent_response_valid", response)
    if word is not None:
        if word in _NEGATIVE_WORDS:
            return Label.INVALID
        if word in _POSITIVE_WORDS:
            return Label.VALID
        return Label.NOT_FOUND
    word = _label_after("is_the_agent_response_invalid", response)
    if word is not None:
        return Label.INVALID if word in (Label.TRUE.value, Label.INVALID.value) else Label.VALID
    return Label.NOT_FOUND


class FinalResponseMatchV2Evaluator(LlmAsJudge[LlmAsAJudgeCriterion]):
    """Judges each final response valid (1) or invalid (0) against the expected response."""

    criterion_type: ClassVar[type[LlmAsAJudgeCriterion]] = LlmAsAJudgeCriterion

    def __init__(self, eval_metric: EvalMetric) -> None:
        super().__init__(
            eval_metric,
            FinalResponseMatchV2Evaluator.criterion_type,
            expected_invocations_required=True,
        )
        self._auto_rater_prompt_template = _FINAL_RESPONSE_MATCH_V2_PROMPT

    @override
    def format_auto_rater_prompt(
        self, actual_invocation: Invocation, expected_invocation: Invocation | None
    ) -> str:
        if expected_invocation is None:
            raise ValueError("final_response_match_v2 needs the expected invocation.")
        include = self._criterion.include_intermediate_responses_in_final
        reference = get_text_from_content(
            expected_invocation, include_intermediate_responses_in_final=include
        )
        response = get_text_from_content(
            actual_invocation, include_intermediate_responses_in_final=include
        )
        return self._auto_rater_prompt_template.format(
            prompt=get_text_from_content(expected_invocation.user_content),
            response=response or "",
            golden_response=reference or "",
        )

    @override
    def convert_auto_rater_response_to_score(self, llm_response: LlmResponse) -> AutoRaterScore:
        text = get_text_from_content(llm_response.content)
        if text is None:
            return AutoRaterScore()
        label = _parse_critique(text)
        if label == Label.VALID:
            return AutoRaterScore(score=1.0)
        if label == Label.INVALID:
            return AutoRaterScore(score=0.0)
        return AutoRaterScore()

    @override
    def aggregate_per_invocation_samples(
        self, per_invocation_samples: list[PerInvocationResult]
    ) -> PerInvocationResult:
        """The first valid sample when valid ones are the majority of the judged samples, else
        the first invalid one; the first sample when none could be judged."""
        return _majority_verdict(per_invocation_samples)

    @override
    def aggregate_invocation_results(
        self, per_invocation_results: list[PerInvocationResult]
    ) -> EvaluationResult:
        """The fraction of judged invocations that are valid."""
        return _mean_of_judged(per_invocation_results, self._criterion.threshold)
