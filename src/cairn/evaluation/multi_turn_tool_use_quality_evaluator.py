"""``multi_turn_tool_use_quality_v1``: how well the agent chose and called its tools over the
whole conversation, as a judge model sees it (ADK asks the Vertex AI evaluation service).
Needs no expected invocations.

In [0, 1], higher is better: the mean of the judge's verdicts on the properties below.
"""

from __future__ import annotations

from typing import ClassVar

from ._multi_turn_judge import _MultiTurnJudge, _prompt, _rubrics
from .eval_rubrics import Rubric


class MultiTurnToolUseQualityV1Evaluator(_MultiTurnJudge):
    """Judges the agent's tool calls across the conversation."""

    BUILT_IN_RUBRICS: ClassVar[tuple[Rubric, ...]] = _rubrics(
        (
            "suitable_tools",
            "Each tool call uses a tool suited to what the user needed at that point, and no "
            "tool call the task needed is missing.",
        ),
        (
            "grounded_arguments",
            "Every tool call's arguments are well formed and come from the user's messages or "
            "earlier tool results, not from invention.",
        ),
        (
            "results_used_correctly",
            "The agent uses each tool's result correctly in what it does and says next, "
            "including when a tool reports an error.",
        ),
        ("no_redundant_calls", "The agent makes no redundant or repeated tool calls."),
    )
    PROMPT: ClassVar[str] = _prompt(
        "Your task is to judge how well the agent used its tools: which tools it called, when, "
        "with which arguments, and what it did with the results."
    )
