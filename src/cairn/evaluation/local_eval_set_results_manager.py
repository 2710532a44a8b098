"""Eval results as files: ``<agents_dir>/<app>/.adk/eval_history/<name>.evalset_result.json``."""

from __future__ import annotations

import logging
import os

from pydantic import ValidationError
from typing_extensions import override

from cairn.errors import NotFoundError

from ._eval_set_results_manager_utils import create_eval_set_result, parse_eval_set_result_json
from ._path_validation import validate_path_segment
from ._validation_errors import first_error_location
from .errors import EvalFileError
from .eval_result import EvalCaseResult, EvalSetResult
from .eval_set_results_manager import EvalSetResultsManager

logger = logging.getLogger(__name__)

# ADK's folder, so that results written by either tool are listed by both.
_ADK_EVAL_HISTORY_DIR = os.path.join(".adk", "eval_history")
_EVAL_SET_RESULT_FILE_EXTENSION = ".evalset_result.json"


class LocalEvalSetResultsManager(EvalSetResultsManager):
    """Eval results as JSON files in each app's ``.adk/eval_history`` folder."""

    def __init__(self, agents_dir: str) -> None:
        self._agents_dir = agents_dir

    @override
    def save_eval_set_result(
        self, app_name: str, eval_set_id: str, eval_case_results: list[EvalCaseResult]
    ) -> None:
        validate_path_segment(app_name, "app_name")
        validate_path_segment(eval_set_id, "eval_set_id")
        result = create_eval_set_result(app_name, eval_set_id, eval_case_results)
        folder = self._get_eval_history_dir(app_name)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(
            folder, f"{result.eval_set_result_name}{_EVAL_SET_RESULT_FILE_EXTENSION}"
        )
        logger.info("Writing the eval result to %s", path)
        with open(path, "w", encoding="utf-8") as file:
            # None fields are left out: google-genai adds optional Part fields over time, and an
            # older google-genai (ADK's) rejects keys it does not know, even when null.
            file.write(result.model_dump_json(indent=2, exclude_none=True))

    @override
    def get_eval_set_result(self, app_name: str, eval_set_result_id: str) -> EvalSetResult:
        validate_path_segment(eval_set_result_id, "eval_set_result_id")
        path = os.path.join(
            self._get_eval_history_dir(app_name),
            eval_set_result_id + _EVAL_SET_RESULT_FILE_EXTENSION,
        )
        if not os.path.exists(path):
            raise NotFoundError(
                f"Eval set result `{eval_set_result_id}` of app `{app_name}` not found; "
                "list_eval_set_results names the saved ones."
            )
        with open(path, encoding="utf-8") as file:
            content = file.read()
        try:
            return parse_eval_set_result_json(content)
        except ValidationError as error:
            field, message = first_error_location(error)
            raise EvalFileError(
                path=path,
                field=field,
                problem=message,
                fix="The file is not an eval set result; remove it or restore it.",
            ) from error
        except ValueError as error:
            raise EvalFileError(
                path=path, field=None, problem=str(error), fix="Fix the JSON syntax."
            ) from error

    @override
    def list_eval_set_results(self, app_name: str) -> list[str]:
        folder = self._get_eval_history_dir(app_name)
        if not os.path.exists(folder):
            return []
        return [
            name.removesuffix(_EVAL_SET_RESULT_FILE_EXTENSION)
            for name in os.listdir(folder)
            if name.endswith(_EVAL_SET_RESULT_FILE_EXTENSION)
        ]

    def _get_eval_history_dir(self, app_name: str) -> str:
        validate_path_segment(app_name, "app_name")
        return os.path.join(self._agents_dir, app_name, _ADK_EVAL_HISTORY_DIR)
