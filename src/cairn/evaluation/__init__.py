"""Evaluation: ADK's eval sets, criteria and runners (``cairn eval``, ``AgentEvaluator``).

``AgentEvaluator`` is imported on first use, so that importing the data model does not load
the runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent_evaluator import AgentEvaluator

__all__ = ["AgentEvaluator"]


def __getattr__(name: str) -> Any:
    if name == "AgentEvaluator":
        from .agent_evaluator import AgentEvaluator

        return AgentEvaluator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
