"""The base of the multi-turn metrics cairn judges with a model where ADK calls the Vertex AI
evaluation service (task success, trajectory quality, tool use quality).

Each metric has its own fixed properties (rubrics), plus any rubrics of its criterion; the
case's and invocations' rubrics are not used. The judge reads the whole conversation once, on
the last invocation: earlier invocations are NOT_EVALUATED, and the last invocation's score
(the mean of its rubric verdicts) and rubric scores are the case's.
"""

from __future__ import annotations

from typing import ClassVar

from typing_extensions import override

from .eval_case import ConversationScenario, Invocation
from .eval_metrics import EvalMetric
from .eval_rubrics import Rubric, RubricContent
from .evaluator import EvaluationResult, PerInvocationResult
from .llm_as_judge_utils import get_average_rubric_score, get_eval_status
from .rubric_based_evaluator import InvocationResultsSummarizer
from .rubric_based_multi_turn_trajectory_evaluator import (
    RubricBasedMultiTurnTrajectoryEvaluator,
    _properties_json,
)

_TEMPLATE = """You are reviewing a whole conversation between a user and an AI agent, \
including every tool the agent called and what each call returned. {task}

For each property listed under <properties> (a JSON list of objects with an "id" and a \
"property"), decide whether the conversation satisfies it. Judge only the properties given; \
add none of your own. "yes": the conversation satisfies the property, or the property does \
not apply to it. "no": the property applies and the conversation does not satisfy it. Base \
each verdict on what is in the conversation, not on what the agent claims it did.

<user_goal>
{{user_goal}}
</user_goal>

<agent_system_instructions>
{{agent_instructions}}
</agent_system_instructions>

<agent_tool_definitions>
{{agent_tool_definitions}}
</agent_tool_definitions>

<conversation_history>
{{user_agent_dialogue}}
</conversation_history>

<properties>
{{properties}}
</properties>

For every property, in the order given, write this block (start each line at the beginning \
of a line):
ID: <the property's "id">
Property: <the property's text, copied word for word>
Rationale: <the turns and calls that decide the verdict>
Verdict: <yes or no>
"""


def _prompt(task: str) -> str:
    return _TEMPLATE.format(task=task)


def _rubrics(*properties: tuple[str, str]) -> tuple[Rubric, ...]:
    return tuple(
        Rubric(rubric_id=rubric_id, rubric_content=RubricContent(text_property=text))
        for rubric_id, text in properties
    )


class _LastTurnSummarizer(InvocationResultsSummarizer):
    """The case's result is its one judged invocation's, rubric scores included."""

    @override
    def summarize(
        self, per_invocation_results: list[PerInvocationResult], threshold: float
    ) -> EvaluationResult:
        rubric_scores = [s for r in per_invocation_results for s in r.rubric_scores or []]
        score = get_average_rubric_score(rubric_scores)
        return EvaluationResult(
            overall_score=score,
            overall_eval_status=get_eval_status(score, threshold),
            per_invocation_results=per_invocation_results,
            overall_rubric_scores=rubric_scores or None,
        )


class _MultiTurnJudge(RubricBasedMultiTurnTrajectoryEvaluator):
    """A conversation-level metric with built-in properties."""

    BUILT_IN_RUBRICS: ClassVar[tuple[Rubric, ...]] = ()
    PROMPT: ClassVar[str] = ""

    def __init__(self, eval_metric: EvalMetric) -> None:
        super().__init__(eval_metric)
        self._rubrics = [*self.BUILT_IN_RUBRICS, *self._rubrics]
        self._auto_rater_prompt_template = self.PROMPT
        self._invocation_results_summarizer = _LastTurnSummarizer()
        self._user_goal = "Not given."

    @override
    async def evaluate_invocations(
        self,
        actual_invocations: list[Invocation],
        expected_invocations: list[Invocation] | None = None,
        conversation_scenario: ConversationScenario | None = None,
    ) -> EvaluationResult:
        self._user_goal = (
            f"The user opened with: {conversation_scenario.starting_prompt}\n"
            f"The user's plan: {conversation_scenario.conversation_plan}"
            if conversation_scenario is not None
            else "Not given; infer it from the user's messages."
        )
        return await super().evaluate_invocations(
            actual_invocations, expected_invocations, conversation_scenario
        )

    @override
    def format_auto_rater_prompt(self, actual_invocation: Invocation, _: Invocation | None) -> str:
        self.create_effective_rubrics_list(None)  # built-in and criterion rubrics only
        return self._auto_rater_prompt_template.format(
            user_goal=self._user_goal,
            user_agent_dialogue=self._formatted_dialogue,
            properties=_properties_json(self.get_effective_rubrics_list()),
            agent_instructions=self._formatted_instructions,
            agent_tool_definitions=self._formatted_tools,
        )
