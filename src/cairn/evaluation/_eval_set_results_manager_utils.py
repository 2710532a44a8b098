"""Making and parsing EvalSetResults, shared by the result managers."""

from __future__ import annotations

import json
import time

from pydantic import ValidationError

from .eval_result import EvalCaseResult, EvalSetResult


def create_eval_set_result(
    app_name: str, eval_set_id: str, eval_case_results: list[EvalCaseResult]
) -> EvalSetResult:
    """A new result, id ``<app>_<eval set>_<unix time>`` (its name: the id with ``/`` as ``_``)."""
    timestamp = time.time()
    result_id = f"{app_name}_{eval_set_id}_{timestamp}"
    return EvalSetResult(
        eval_set_result_id=result_id,
        eval_set_result_name=result_id.replace("/", "_"),
        eval_set_id=eval_set_id,
        eval_case_results=eval_case_results,
        creation_timestamp=timestamp,
    )


def parse_eval_set_result_json(eval_set_result_json: str | bytes) -> EvalSetResult:
    """The result in the JSON; older files hold the JSON again inside a JSON string."""
    try:
        return EvalSetResult.model_validate_json(eval_set_result_json)
    except ValidationError as first_error:
        try:
            decoded = json.loads(eval_set_result_json)
        except json.JSONDecodeError:
            raise first_error from None
        if isinstance(decoded, str):
            return EvalSetResult.model_validate_json(decoded)
        raise
