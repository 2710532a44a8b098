"""``rubric_based_tool_use_quality_v1``: a judge checks the agent's tool calls against rubrics
(of type ``TOOL_USE_QUALITY`` when they come from the case), e.g. "the geocoding tool is
called before the weather tool"."""

from __future__ import annotations

import logging
from typing import ClassVar

from typing_extensions import override

from .eval_case import Invocation
from .eval_metrics import EvalMetric, RubricsBasedCriterion
from .llm_as_judge_utils import (
    get_text_from_content,
    get_tool_calls_and_responses_as_json_str,
    get_tool_declarations_as_json_str,
)
from .rubric_based_evaluator import RubricBasedEvaluator, _rubric_list_text

logger = logging.getLogger(__name__)

_RUBRIC_BASED_TOOL_USE_QUALITY_V1_PROMPT = """You are reviewing how an AI agent used its \
tools while answering a user. For each property listed under <properties>, decide whether \
the agent's tool calls satisfy it. Judge only the properties given; add none of your own.

Verdicts:
- "yes": the tool calls satisfy the property, or the property does not apply to them.
- "no": the property applies and the tool calls do not satisfy it.

Look at which tools were called, in what order, with which arguments, and what they \
returned. An argument satisfies a property about where it comes from only if it can be \
traced to the user's request or to an earlier tool's result. Use the tool declarations to \
tell whether a tool or argument exists. You cannot call the tools yourself.

<available_tools>
{tool_declarations}
</available_tools>

<user_prompt>
{user_input}
</user_prompt>

<tool_calls_and_results>
{tool_usage}
</tool_calls_and_results>

<properties>
{rubrics}
</properties>

Answer in plain text, not JSON. For every property, in the order given, write this block \
(start each line at the beginning of a line):
ID: <the id from the property's "[id: ...]" tag, exactly as shown>
Property: <the property's text after the tag, copied word for word>
Rationale: <which calls (by step number) satisfy or break the property, and why>
Verdict: <yes or no>
"""


class RubricBasedToolUseV1Evaluator(RubricBasedEvaluator):
    """Scores the agent's tool use rubric by rubric (1 yes, 0 no); the score is their mean."""

    criterion_type: ClassVar[type[RubricsBasedCriterion]] = RubricsBasedCriterion
    RUBRIC_TYPE: ClassVar[str] = "TOOL_USE_QUALITY"

    def __init__(self, eval_metric: EvalMetric) -> None:
        super().__init__(
            eval_metric,
            criterion_type=RubricBasedToolUseV1Evaluator.criterion_type,
            rubric_type=RubricBasedToolUseV1Evaluator.RUBRIC_TYPE,
        )
        self._auto_rater_prompt_template = _RUBRIC_BASED_TOOL_USE_QUALITY_V1_PROMPT

    @override
    def format_auto_rater_prompt(self, actual_invocation: Invocation, _: Invocation | None) -> str:
        self.create_effective_rubrics_list(actual_invocation.rubrics)
        app_details = actual_invocation.app_details
        return self._auto_rater_prompt_template.format(
            tool_declarations=(
                get_tool_declarations_as_json_str(app_details)
                if app_details
                else "Agent has no tools."
            ),
            user_input=get_text_from_content(actual_invocation.user_content),
            tool_usage=get_tool_calls_and_responses_as_json_str(
                actual_invocation.intermediate_data
            ),
            rubrics=_rubric_list_text(self.get_effective_rubrics_list()),
        )
