"""Run by google-adk's own python: ROUGE-1 of [response, reference] pairs by ADK's code.

argv[1] is a directory that holds rouge-score (ADK's venv has no eval extra); it is put
last on sys.path, so every package ADK's venv has is still its own.
"""

import json
import sys

sys.path.append(sys.argv[1])

from google.adk.evaluation.final_response_match_v1 import _calculate_rouge_1_scores

pairs = json.load(sys.stdin)
scores = [_calculate_rouge_1_scores(response, reference) for response, reference in pairs]
sys.stdout.write(json.dumps([[s.precision, s.recall, s.fmeasure] for s in scores]))
