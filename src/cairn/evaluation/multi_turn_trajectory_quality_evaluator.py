"""``multi_turn_trajectory_quality_v1``: how well the agent went about the user's task over
the whole conversation, as a judge model sees it (ADK asks the Vertex AI evaluation service).
Unlike task success, the path matters, not only the outcome. Needs no expected invocations.

In [0, 1], higher is better: the mean of the judge's verdicts on the properties below.
"""

from __future__ import annotations

from typing import ClassVar

from ._multi_turn_judge import _MultiTurnJudge, _prompt, _rubrics
from .eval_rubrics import Rubric


class MultiTurnTrajectoryQualityV1Evaluator(_MultiTurnJudge):
    """Judges the path the agent took through the conversation."""

    BUILT_IN_RUBRICS: ClassVar[tuple[Rubric, ...]] = _rubrics(
        (
            "logical_progression",
            "The agent's messages and tool calls follow a sensible order towards the user's "
            "goal, each step using what earlier steps found out.",
        ),
        (
            "no_wasted_steps",
            "The agent takes no needless, repeated or circular steps, and does not ask the user "
            "for anything it was already told or could look up.",
        ),
        (
            "follows_instructions",
            "Throughout the conversation the agent acts within its system instructions.",
        ),
        (
            "keeps_context",
            "The agent stays consistent with what the user said in earlier turns.",
        ),
    )
    PROMPT: ClassVar[str] = _prompt(
        "Your task is to judge the quality of the path the agent took: how it reasoned, which "
        "steps it took and in what order, not only whether it got there."
    )
