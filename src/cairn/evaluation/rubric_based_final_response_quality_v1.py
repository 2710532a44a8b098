"""``rubric_based_final_response_quality_v1``: a judge checks the agent's final response
against rubrics (of type ``FINAL_RESPONSE_QUALITY`` when they come from the case), using the
agent's instructions, its tools, its tool calls and their results, and grounding metadata as
the evidence."""

from __future__ import annotations

import logging
from typing import ClassVar

from typing_extensions import override

from .eval_case import Invocation, InvocationEvents
from .eval_metrics import EvalMetric, RubricsBasedCriterion
from .llm_as_judge_utils import (
    get_grounding_metadata_as_json_str,
    get_text_from_content,
    get_tool_calls_and_responses_as_json_str,
    get_tool_declarations_as_json_str,
)
from .rubric_based_evaluator import RubricBasedEvaluator, _rubric_list_text

logger = logging.getLogger(__name__)

_RUBRIC_BASED_FINAL_RESPONSE_QUALITY_V1_PROMPT = """You are reviewing the final answer an AI \
agent gave to a user. For each property listed under <properties>, decide whether the \
agent's final answer satisfies it. Judge only the properties given; add none of your own.

Verdicts:
- "yes": the final answer satisfies the property, or the property does not apply to it.
- "no": the property applies and the final answer does not satisfy it, or the answer makes a \
claim the property is about that the evidence below cannot confirm.

What counts as evidence: the user's request, the results of tool calls that were made \
sensibly (the right tool, with arguments that fit the request), and the grounding metadata. \
The agent's own wording, summaries or reasoning are not evidence, and neither is the result \
of a tool call made with wrong arguments or to the wrong tool. If the agent could have \
called a tool to find something out and did not, a claim about it is unsupported. You cannot \
call the tools yourself. Accept answers that say the same thing in other words, and numbers \
that differ only in rounding that changes no conclusion.

<user_prompt>
  <developer_instructions>
{developer_instructions}
  </developer_instructions>
  <available_tools>
{tool_declarations}
  </available_tools>
  <main_prompt>
{user_input}
  </main_prompt>
</user_prompt>
<response>
  <response_steps>
{response_steps}
  </response_steps>
  <grounding_metadata>
{grounding_metadata}
  </grounding_metadata>
  <final_answer>
{final_response}
  </final_answer>
</response>

<properties>
{rubrics}
</properties>

Answer in plain text, not JSON. For every property, in the order given, write this block \
(start each line at the beginning of a line):
ID: <the id from the property's "[id: ...]" tag, exactly as shown>
Property: <the property's text after the tag, copied word for word>
Evidence: <the evidence that bears on the property, citing step numbers, or why there is none>
Rationale: <how the evidence supports or contradicts the final answer, or why the property \
does not apply>
Verdict: <yes or no>
"""


class RubricBasedFinalResponseQualityV1Evaluator(RubricBasedEvaluator):
    """Scores the final response rubric by rubric (1 yes, 0 no); the score is their mean."""

    criterion_type: ClassVar[type[RubricsBasedCriterion]] = RubricsBasedCriterion
    RUBRIC_TYPE: ClassVar[str] = "FINAL_RESPONSE_QUALITY"

    def __init__(self, eval_metric: EvalMetric) -> None:
        super().__init__(
            eval_metric,
            criterion_type=RubricBasedFinalResponseQualityV1Evaluator.criterion_type,
            rubric_type=RubricBasedFinalResponseQualityV1Evaluator.RUBRIC_TYPE,
        )
        self._auto_rater_prompt_template = _RUBRIC_BASED_FINAL_RESPONSE_QUALITY_V1_PROMPT

    @override
    def format_auto_rater_prompt(self, actual_invocation: Invocation, _: Invocation | None) -> str:
        self.create_effective_rubrics_list(actual_invocation.rubrics)
        final_response = get_text_from_content(
            actual_invocation,
            include_intermediate_responses_in_final=(
                self._criterion.include_intermediate_responses_in_final
            ),
        )
        developer_instructions = ""
        tool_declarations = "Agent has no tools."
        app_details = actual_invocation.app_details
        if app_details:
            # The agent that answered: the author of the first event, else the app's first
            # agent (so an agent that called no tool still has its instructions shown).
            data = actual_invocation.intermediate_data
            agent_name = None
            if isinstance(data, InvocationEvents) and data.invocation_events:
                agent_name = data.invocation_events[0].author
            elif app_details.agent_details:
                agent_name = next(iter(app_details.agent_details))
            if agent_name:
                developer_instructions = app_details.get_developer_instructions(agent_name)
            tool_declarations = get_tool_declarations_as_json_str(app_details)
        return self._auto_rater_prompt_template.format(
            developer_instructions=developer_instructions,
            tool_declarations=tool_declarations,
            user_input=get_text_from_content(actual_invocation.user_content),
            response_steps=get_tool_calls_and_responses_as_json_str(
                actual_invocation.intermediate_data
            ),
            grounding_metadata=get_grounding_metadata_as_json_str(
                actual_invocation.intermediate_data
            ),
            final_response=final_response or "",
            rubrics=_rubric_list_text(self.get_effective_rubrics_list()),
        )
