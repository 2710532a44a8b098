"""Run by google-adk's own python: validate JSON with ADK's model and dump it back.

Reads {"model": "EvalSet" | "EvalSetResult" | "EvalConfig", "json": "...", "dump": {...}}
on stdin and prints the model's model_dump_json(**dump).
"""

import json
import sys

from google.adk.evaluation.eval_config import EvalConfig
from google.adk.evaluation.eval_result import EvalSetResult
from google.adk.evaluation.eval_set import EvalSet

MODELS = {"EvalSet": EvalSet, "EvalSetResult": EvalSetResult, "EvalConfig": EvalConfig}

request = json.load(sys.stdin)
model = MODELS[request["model"]].model_validate_json(request["json"])
sys.stdout.write(model.model_dump_json(**request["dump"]))
