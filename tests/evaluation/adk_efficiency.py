"""Run by google-adk's own python: the efficiency metrics of invocations by ADK's evaluators.

Reads {"metric": name, "invocations": [invocation]} requests on stdin; prints, for each, the
per-invocation scores, the overall score, the status name and the overall details.
"""

import json
import sys

from google.adk.evaluation import _efficiency_evaluators as efficiency
from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_metrics import EvalMetric

EVALUATORS = {
    "tool_call_count_v1": efficiency._ToolCallCountV1Evaluator,
    "inference_call_count_v1": efficiency._InferenceCallCountV1Evaluator,
    "token_usage_v1": efficiency._TokenUsageV1Evaluator,
    "invocation_duration_v1": efficiency._InvocationDurationV1Evaluator,
}

answers = []
for request in json.load(sys.stdin):
    evaluator = EVALUATORS[request["metric"]](eval_metric=EvalMetric(metric_name=request["metric"]))
    result = evaluator.evaluate_invocations(
        [Invocation.model_validate(i) for i in request["invocations"]]
    )
    details = result.overall_token_usage_details or result.overall_duration_details
    answers.append(
        {
            "scores": [r.score for r in result.per_invocation_results],
            "overall": result.overall_score,
            "status": result.overall_eval_status.name,
            "details": details.model_dump() if details else None,
        }
    )
sys.stdout.write(json.dumps(answers))
