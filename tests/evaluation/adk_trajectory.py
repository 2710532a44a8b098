"""Run by google-adk's own python: score trajectories with ADK's TrajectoryEvaluator.

Reads a list of {"criterion": {...}, "actual": [invocation], "expected": [invocation]} on
stdin; prints, for each, the per-invocation scores, the overall score and status name.
"""

import json
import sys

from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

answers = []
for request in json.load(sys.stdin):
    metric = EvalMetric(
        metric_name="tool_trajectory_avg_score",
        criterion=ToolTrajectoryCriterion.model_validate(request["criterion"]),
    )
    result = TrajectoryEvaluator(eval_metric=metric).evaluate_invocations(
        [Invocation.model_validate(i) for i in request["actual"]],
        [Invocation.model_validate(i) for i in request["expected"]],
    )
    answers.append(
        {
            "scores": [r.score for r in result.per_invocation_results],
            "overall": result.overall_score,
            "status": result.overall_eval_status.name,
        }
    )
sys.stdout.write(json.dumps(answers))
