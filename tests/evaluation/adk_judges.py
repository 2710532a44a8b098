"""Run by google-adk's own python: score invocations with ADK's judged metrics, given the
judge's replies.

Reads a list of {"metric": name, "criterion": {...}, "actual": [invocation],
"expected": [invocation] | null, "replies": [text, or {"error": message}]} on stdin; a scripted
judge model answers each request with the next reply, in order. Prints, for each, the
per-invocation scores, statuses and rubric scores, and the overall ones.
"""

import asyncio
import json
import sys
from typing import Any, ClassVar

from google.adk.evaluation.eval_case import Invocation
from google.adk.evaluation.eval_metrics import BaseCriterion, EvalMetric
from google.adk.evaluation.final_response_match_v2 import FinalResponseMatchV2Evaluator
from google.adk.evaluation.hallucinations_v1 import HallucinationsV1Evaluator
from google.adk.evaluation.rubric_based_final_response_quality_v1 import (
    RubricBasedFinalResponseQualityV1Evaluator,
)
from google.adk.evaluation.rubric_based_multi_turn_trajectory_evaluator import (
    RubricBasedMultiTurnTrajectoryEvaluator,
)
from google.adk.evaluation.rubric_based_tool_use_quality_v1 import RubricBasedToolUseV1Evaluator
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.models.registry import LLMRegistry
from google.genai import types


class ParityJudge(BaseLlm):
    replies: ClassVar[list[Any]] = []

    @classmethod
    def supported_models(cls) -> list[str]:
        return ["parity-judge"]

    async def generate_content_async(self, llm_request, stream=False):
        reply = ParityJudge.replies.pop(0)
        if isinstance(reply, dict):
            raise RuntimeError(reply["error"])
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=reply)]))


LLMRegistry.register(ParityJudge)

# By class, not through ADK's registry: that one imports the Vertex AI facade (and pandas).
EVALUATORS = {
    "final_response_match_v2": FinalResponseMatchV2Evaluator,
    "hallucinations_v1": HallucinationsV1Evaluator,
    "rubric_based_final_response_quality_v1": RubricBasedFinalResponseQualityV1Evaluator,
    "rubric_based_multi_turn_trajectory_quality_v1": RubricBasedMultiTurnTrajectoryEvaluator,
    "rubric_based_tool_use_quality_v1": RubricBasedToolUseV1Evaluator,
}


def rubric_scores(scores):
    return None if scores is None else [[s.rubric_id, s.score] for s in scores]


async def main() -> None:
    answers = []
    for request in json.load(sys.stdin):
        ParityJudge.replies[:] = request["replies"]
        metric = EvalMetric(
            metric_name=request["metric"],
            criterion=BaseCriterion.model_validate(request["criterion"]),
        )
        evaluator = EVALUATORS[request["metric"]](metric)
        expected = request["expected"]
        result = evaluator.evaluate_invocations(
            [Invocation.model_validate(i) for i in request["actual"]],
            None if expected is None else [Invocation.model_validate(i) for i in expected],
        )
        if asyncio.iscoroutine(result):
            result = await result
        answers.append(
            {
                "scores": [r.score for r in result.per_invocation_results],
                "statuses": [r.eval_status.name for r in result.per_invocation_results],
                "rubric_scores": [
                    rubric_scores(r.rubric_scores) for r in result.per_invocation_results
                ],
                "overall": result.overall_score,
                "status": result.overall_eval_status.name,
                "overall_rubric_scores": rubric_scores(result.overall_rubric_scores),
                "replies_left": len(ParityJudge.replies),
            }
        )
    sys.stdout.write(json.dumps(answers))


asyncio.run(main())
