"""``hallucinations_v1``: the share of the agent's sentences that its context supports.

Two judge calls per response: a segmenter splits the response into sentences, then a
validator labels each sentence against the context (the agents' instructions, the user's
message, the tool declarations, grounding metadata, and the tool calls, results and texts
that came before the response). ``supported`` and ``not_applicable`` count 1;
``unsupported``, ``contradictory`` and ``disputed`` count 0. A response's score is the mean
over its sentences; an invocation's, the mean over its responses (the final one, and the
intermediate ones with ``evaluate_intermediate_nl_responses``); the case's, the mean over
invocations. In [0, 1], higher is better. The judge is asked once per step (``num_samples``
is not used, as in ADK); a step whose judge call fails or whose reply cannot be read is left
out, and an invocation with no step left is NOT_EVALUATED.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import statistics
from typing import ClassVar

from typing_extensions import override

from .app_details import AppDetails
from .eval_case import ConversationScenario, Invocation, InvocationEvent, InvocationEvents
from .eval_metrics import EvalMetric, HallucinationsCriterion
from .evaluator import (
    EvalStatus,
    EvaluationResult,
    Evaluator,
    PerInvocationResult,
    _validate_invocation_lengths,
)
from .llm_as_judge import _error_score, _read_criterion
from .llm_as_judge_utils import (
    _ask_judge,
    _judge_request,
    _new_judge_model,
    build_judge_request_config,
    get_eval_status,
    get_grounding_metadata_as_json_str,
    get_text_from_content,
    get_tool_declarations_as_json_str,
)

logger = logging.getLogger(__name__)

_HALLUCINATIONS_V1_SEGMENTER_PROMPT = """Split the text below into its sentences, so that \
each can be fact-checked on its own.

Rules:
- Keep every sentence exactly as written; do not reword, merge, fix or drop anything.
- A list item, a heading or a table row counts as its own sentence.
- A line that introduces a list (ending in a colon) is a sentence too.
- Do not split inside a number, an abbreviation, a URL or a code span.

Write each sentence on its own line wrapped in tags, and nothing else:
<sentence>first sentence</sentence>
<sentence>second sentence</sentence>

The text:
{response}
"""

_HALLUCINATIONS_V1_VALIDATOR_PROMPT = """You are fact-checking the sentences an AI agent \
wrote against the context it had. The context holds the agent's instructions, the user's \
message, the tools it could use, grounding metadata, and the tool calls and results (and \
earlier agent messages) that came before these sentences. Treat the context as the only \
source of truth; do not use your own knowledge of the world.

Give each sentence exactly one label:
- supported: the context states or clearly implies what the sentence says.
- unsupported: the context neither states nor implies it.
- contradictory: the context says otherwise.
- disputed: parts of the context support it and other parts contradict it.
- not_applicable: the sentence makes no factual claim (a greeting, a question, an offer to \
help, an opinion, a heading).

<context>
{context}
</context>

<sentences>
{sentences}
</sentences>

For every sentence, in order, write this block; copy excerpts word for word from the \
context, and write null where an excerpt does not apply (supporting_excerpt is for \
supported and disputed; contradicting_excerpt for contradictory and disputed):
sentence: <the sentence>
label: <one label>
rationale: <a short reason>
supporting_excerpt: <excerpt or null>
contradicting_excerpt: <excerpt or null>
"""

_POSITIVE_LABELS = frozenset(["supported", "not_applicable"])
_NEGATIVE_LABELS = frozenset(["unsupported", "contradictory", "disputed"])

_SENTENCE_TAG = re.compile(r"<sentence>(.*?)</sentence>", re.DOTALL)
_FIELDS = ("sentence", "label", "rationale", "supporting_excerpt", "contradicting_excerpt")
_FIELD_LINE = re.compile(rf"^[ \t]*({'|'.join(_FIELDS)})[ \t]*:(.*)$", re.IGNORECASE | re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class EvaluationStep:
    """One natural-language response to check, with the context it is checked against."""

    context: str
    nl_response: str


def _parse_sentences(response_text: str) -> list[str]:
    """The sentences the segmenter wrapped in ``<sentence>`` tags."""
    return _SENTENCE_TAG.findall(response_text)


def _parse_validation_results(response_text: str) -> list[dict[str, str | None]]:
    """The validator's blocks, one dict per sentence with the five fields (an excerpt of
    "null" is None). A block starts at a ``sentence:`` line; a value may go on over lines."""
    blocks: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    field: str | None = None
    for line in response_text.strip().splitlines():
        match = _FIELD_LINE.match(line)
        if match:
            field = match.group(1).lower()
            if field == "sentence":
                current = {}
                blocks.append(current)
            if current is not None:
                current[field] = match.group(2).strip()
        elif current is not None and field is not None:
            current[field] = f"{current.get(field, '')}\n{line}".strip()
    complete: list[dict[str, str | None]] = []
    for block in blocks:
        if all(name in block for name in _FIELDS):
            complete.append(
                {
                    name: None
                    if name.endswith("_excerpt") and (block[name] or "").lower() == "null"
                    else block[name]
                    for name in _FIELDS
                }
            )
        else:
            logger.warning("hallucinations_v1: an incomplete validator block: %r", block)
    return complete


def _label_scores(results: list[dict[str, str | None]]) -> list[int]:
    scores = []
    for result in results:
        label = (result.get("label") or "").strip().strip("`*").lower()
        if label in _POSITIVE_LABELS:
            scores.append(1)
        elif label in _NEGATIVE_LABELS:
            scores.append(0)
        else:
            logger.debug("hallucinations_v1: an unknown label %r", label)
    return scores


class HallucinationsV1Evaluator(Evaluator):
    """Scores the share of the agent's sentences its context supports."""

    criterion_type: ClassVar[type[HallucinationsCriterion]] = HallucinationsCriterion

    def __init__(self, eval_metric: EvalMetric) -> None:
        self._eval_metric = eval_metric
        self._criterion = _read_criterion(eval_metric, HallucinationsV1Evaluator.criterion_type)
        self._judge_model_options = self._criterion.judge_model_options
        self._judge_model = _new_judge_model(self._judge_model_options)
        self.segmenter_prompt = _HALLUCINATIONS_V1_SEGMENTER_PROMPT
        self.sentence_validator_prompt = _HALLUCINATIONS_V1_VALIDATOR_PROMPT
        self._model = self._judge_model_options.judge_model
        self._model_config = build_judge_request_config(
            self._judge_model_options.judge_model_config
        )

    def _create_context_for_step(
        self,
        app_details: AppDetails | None,
        invocation: Invocation,
        events: list[InvocationEvent],
    ) -> str:
        """The context a response is checked against: a header (instructions, user prompt,
        tool definitions, grounding metadata), then each earlier event's texts, tool calls
        and tool outputs."""
        instructions = ""
        tool_declarations = "Agent has no tools."
        if app_details:
            instructions = "\n\n".join(
                f"{name}:\n{details.instructions}"
                for name, details in app_details.agent_details.items()
                if details.instructions
            )
            tool_declarations = get_tool_declarations_as_json_str(app_details)
        grounding = get_grounding_metadata_as_json_str(InvocationEvents(invocation_events=events))
        parts = [
            f"Developer instructions:\n{instructions}\n",
            f"User prompt:\n{get_text_from_content(invocation.user_content)}\n",
            "Tool definitions:",
            f"{tool_declarations}\n",
            "Grounding metadata:",
            f"{grounding}\n",
        ]
        for event in events:
            if event.content is None or not event.content.parts:
                continue
            event_parts = event.content.parts
            texts = [p.text for p in event_parts if p.text]
            calls = [p.function_call for p in event_parts if p.function_call]
            outputs = [p.function_response for p in event_parts if p.function_response]
            if texts:
                parts.append("\n".join(texts) + "\n")
            if calls:
                dumped = [c.model_dump(mode="json", exclude_none=True) for c in calls]
                parts += ["tool_calls:", json.dumps(dumped, indent=2) + "\n"]
            if outputs:
                dumped = [o.model_dump(mode="json", exclude_none=True) for o in outputs]
                parts += ["tool_outputs:", json.dumps(dumped, indent=2) + "\n"]
        return "\n".join(parts)

    async def _judge(self, prompt: str) -> str | None:
        request = _judge_request(self._judge_model_options, self._model_config, prompt)
        return get_text_from_content((await _ask_judge(self._judge_model, request)).content)

    async def _evaluate_nl_response(
        self, nl_response: str, context: str
    ) -> tuple[float | None, str]:
        """(the response's score, the validator's results as JSON, or why there is no score)."""
        try:
            segmented = await self._judge(self.segmenter_prompt.format(response=nl_response))
        except Exception as error:  # a failing judge leaves this step out; the eval goes on
            return None, f"The segmenter call to judge `{self._model}` failed: {error}"
        if segmented is None:
            return None, "The segmenter returned no text."
        sentences = _parse_sentences(segmented)
        if not sentences:
            return None, f"The segmenter's reply has no <sentence> tags: {segmented[:300]!r}"
        tagged = "\n".join(f"<sentence>{s}</sentence>" for s in sentences)
        try:
            validated = await self._judge(
                self.sentence_validator_prompt.format(context=context, sentences=tagged)
            )
        except Exception as error:  # a failing judge leaves this step out; the eval goes on
            return None, f"The validator call to judge `{self._model}` failed: {error}"
        if validated is None:
            return None, "The sentence validator returned no text."
        results = _parse_validation_results(validated)
        scores = _label_scores(results)
        if not scores:
            return None, f"No sentence labels could be read from the validator: {validated[:300]!r}"
        return statistics.mean(scores), json.dumps(results, indent=2)

    def _get_steps_to_evaluate(self, actual: Invocation) -> list[EvaluationStep]:
        """The responses to check, each with its context: with
        ``evaluate_intermediate_nl_responses``, every text of every event (its context is the
        events before it, plus its own grounding metadata), then the final response (its
        context is all the events)."""
        steps = []
        data = actual.intermediate_data
        events = list(data.invocation_events) if isinstance(data, InvocationEvents) else []
        if self._criterion.evaluate_intermediate_nl_responses:
            before: list[InvocationEvent] = []
            for event in events:
                texts = (
                    [p.text for p in event.content.parts if p.text]
                    if event.content and event.content.parts
                    else []
                )
                if texts:
                    seen = (
                        [*before, event.model_copy(update={"content": None})]
                        if event.grounding_metadata
                        else before
                    )
                    context = self._create_context_for_step(actual.app_details, actual, seen)
                    steps += [EvaluationStep(context=context, nl_response=t) for t in texts]
                before.append(event)
        final_text = get_text_from_content(actual.final_response)
        if final_text:
            context = self._create_context_for_step(actual.app_details, actual, events)
            steps.append(EvaluationStep(context=context, nl_response=final_text))
        return steps

    @override
    async def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult:
        _validate_invocation_lengths(actual_invocations, expected_invocations)
        expected: list[Invocation | None] = (
            [None] * len(actual_invocations)
            if expected_invocations is None
            else list(expected_invocations)
        )
        results = []
        for actual, expected_invocation in zip(actual_invocations, expected, strict=True):
            step_scores = []
            problems = []
            for step in self._get_steps_to_evaluate(actual):
                score, detail = await self._evaluate_nl_response(step.nl_response, step.context)
                if score is None:
                    problems.append(detail)
                    logger.warning(
                        "hallucinations_v1: a response of invocation %s was not scored: %s",
                        actual.invocation_id or "(no id)",
                        detail,
                    )
                else:
                    step_scores.append(score)
            score = statistics.mean(step_scores) if step_scores else None
            results.append(
                PerInvocationResult(
                    actual_invocation=actual,
                    expected_invocation=expected_invocation,
                    score=score,
                    eval_status=get_eval_status(score, self._criterion.threshold),
                    rubric_scores=(
                        [_error_score(problems[0])] if score is None and problems else []
                    ),
                )
            )
        if not results:
            return EvaluationResult()
        return self._aggregate_invocation_results(results)

    def _aggregate_invocation_results(
        self, per_invocation_results: list[PerInvocationResult]
    ) -> EvaluationResult:
        scores = [r.score for r in per_invocation_results if r.score is not None]
        if not scores:
            return EvaluationResult(
                overall_score=None,
                overall_eval_status=EvalStatus.NOT_EVALUATED,
                per_invocation_results=per_invocation_results,
            )
        overall = statistics.mean(scores)
        return EvaluationResult(
            overall_score=overall,
            overall_eval_status=get_eval_status(overall, self._criterion.threshold),
            per_invocation_results=per_invocation_results,
        )
