"""``rubric_based_multi_turn_trajectory_quality_v1``: a judge reads the whole conversation
(messages, tool calls and tool results) and checks it against rubrics (of type
``TRAJECTORY_QUALITY`` when they come from the case).

The conversation is judged once, on its last invocation; the earlier invocations are
NOT_EVALUATED and the case's score is the last invocation's.
"""

from __future__ import annotations

import json
import logging
from typing import ClassVar

from typing_extensions import override

from ._multi_turn_dialogue import format_dialogue, format_instructions, format_tools
from .eval_case import ConversationScenario, Invocation
from .eval_metrics import EvalMetric, EvalStatus, RubricsBasedCriterion
from .eval_rubrics import Rubric
from .evaluator import EvaluationResult, PerInvocationResult, _validate_invocation_lengths
from .rubric_based_evaluator import RubricBasedEvaluator

logger = logging.getLogger(__name__)

_RUBRIC_BASED_MULTI_TURN_TRAJECTORY_QUALITY_V1_PROMPT = """You are reviewing a whole \
conversation between a user and an AI agent, including every tool the agent called and what \
each call returned. For each property listed under <properties> (a JSON list of objects with \
an "id" and a "property"), decide whether the agent's behaviour over the conversation \
satisfies it. Judge only the properties given; add none of your own.

Verdicts:
- "yes": the conversation satisfies the property, or the property does not apply to it.
- "no": the property applies and the conversation does not satisfy it.

Base each verdict on what is in the conversation; a function call counts only if it appears \
there with that exact name. Think the property through step by step, then give the block.

<agent_system_instructions>
{agent_instructions}
</agent_system_instructions>

<agent_tool_definitions>
{agent_tool_definitions}
</agent_tool_definitions>

<conversation_history>
{user_agent_dialogue}
</conversation_history>

<properties>
{properties}
</properties>

For every property, in the order given, end your reasoning with this block (start each line \
at the beginning of a line):
ID: <the property's "id">
Property: <the property's text, copied word for word>
Rationale: <the turns and calls that decide the verdict>
Verdict: <yes or no>
"""


def _properties_json(rubrics: list[Rubric]) -> str:
    """The rubrics as the JSON list of ``id``/``property`` (and ``type``) objects the
    multi-turn prompts show."""
    properties = []
    for rubric in rubrics:
        entry = {"id": rubric.rubric_id, "property": rubric.rubric_content.text_property}
        if rubric.type:
            entry["type"] = rubric.type
        properties.append(entry)
    return json.dumps(properties, indent=2)


class RubricBasedMultiTurnTrajectoryEvaluator(RubricBasedEvaluator):
    """Scores a whole conversation rubric by rubric (1 yes, 0 no); the score is their mean."""

    criterion_type: ClassVar[type[RubricsBasedCriterion]] = RubricsBasedCriterion
    RUBRIC_TYPE: ClassVar[str] = "TRAJECTORY_QUALITY"

    def __init__(self, eval_metric: EvalMetric) -> None:
        super().__init__(
            eval_metric,
            criterion_type=RubricBasedMultiTurnTrajectoryEvaluator.criterion_type,
            rubric_type=RubricBasedMultiTurnTrajectoryEvaluator.RUBRIC_TYPE,
        )
        self._auto_rater_prompt_template = _RUBRIC_BASED_MULTI_TURN_TRAJECTORY_QUALITY_V1_PROMPT
        self._formatted_dialogue = ""
        self._formatted_instructions = ""
        self._formatted_tools = ""

    def _assemble_dialogue_history(self, actual_invocations: list[Invocation]) -> None:
        self._formatted_dialogue = format_dialogue(actual_invocations)
        self._formatted_instructions = format_instructions(actual_invocations)
        self._formatted_tools = format_tools(actual_invocations)

    @override
    async def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult:
        _validate_invocation_lengths(actual_invocations, expected_invocations)
        if not actual_invocations:
            return EvaluationResult()
        self._assemble_dialogue_history(actual_invocations)
        expected: list[Invocation | None] = (
            [None] * len(actual_invocations)
            if expected_invocations is None
            else list(expected_invocations)
        )
        earlier = [
            PerInvocationResult(
                actual_invocation=a,
                expected_invocation=e,
                score=None,
                eval_status=EvalStatus.NOT_EVALUATED,
            )
            for a, e in zip(actual_invocations[:-1], expected[:-1], strict=True)
        ]
        last_expected = expected[-1]
        last = await super().evaluate_invocations(
            [actual_invocations[-1]],
            [last_expected] if last_expected is not None else None,
            conversation_scenario,
        )
        last_results = last.per_invocation_results or [
            PerInvocationResult(
                actual_invocation=actual_invocations[-1],
                expected_invocation=last_expected,
                score=last.overall_score,
                eval_status=last.overall_eval_status,
                rubric_scores=last.overall_rubric_scores,
            )
        ]
        return EvaluationResult(
            overall_score=last.overall_score,
            overall_eval_status=last.overall_eval_status,
            per_invocation_results=[*earlier, *last_results],
            overall_rubric_scores=last.overall_rubric_scores,
        )

    @override
    def format_auto_rater_prompt(self, actual_invocation: Invocation, _: Invocation | None) -> str:
        self.create_effective_rubrics_list(actual_invocation.rubrics)
        return self._auto_rater_prompt_template.format(
            user_agent_dialogue=self._formatted_dialogue,
            properties=_properties_json(self.get_effective_rubrics_list()),
            agent_instructions=self._formatted_instructions,
            agent_tool_definitions=self._formatted_tools,
        )
