"""Run by google-adk's own python: convert a legacy *.test.json as ADK's AgentEvaluator does.

argv[1] is the file, argv[2] the initial session as JSON; prints the EvalSet's JSON.
"""

import json
import sys

from google.adk.evaluation.agent_evaluator import AgentEvaluator
from google.adk.evaluation.eval_config import EvalConfig

config = EvalConfig(criteria={"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8})
eval_set = AgentEvaluator._get_eval_set_from_old_format(
    sys.argv[1], config, json.loads(sys.argv[2])
)
sys.stdout.write(eval_set.model_dump_json(exclude_none=True))
