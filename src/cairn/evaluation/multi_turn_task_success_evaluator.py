"""``multi_turn_task_success_v1``: whether the agent achieved what the user wanted over the
whole conversation, as a judge model sees it (ADK asks the Vertex AI evaluation service).

In [0, 1], higher is better: the mean of the judge's verdicts on the properties below.
"""

from __future__ import annotations

from typing import ClassVar

from ._multi_turn_judge import _MultiTurnJudge, _prompt, _rubrics
from .eval_rubrics import Rubric


class MultiTurnTaskSuccessV1Evaluator(_MultiTurnJudge):
    """Judges whether the conversation reached the user's goal (not how it got there)."""

    BUILT_IN_RUBRICS: ClassVar[tuple[Rubric, ...]] = _rubrics(
        (
            "goal_achieved",
            "By the end of the conversation the agent has done what the user set out to get "
            "done, or has correctly explained why it cannot be done.",
        ),
        (
            "every_request_handled",
            "Every request the user made along the way was fulfilled or answered with a "
            "correct reason why not.",
        ),
        (
            "outcome_reported_truthfully",
            "What the agent tells the user about the outcome agrees with the tool results in "
            "the conversation.",
        ),
    )
    PROMPT: ClassVar[str] = _prompt(
        "Your task is to judge whether the agent succeeded at the user's task. Care about the "
        "outcome the user got, not about the path the agent took to get there."
    )
