"""Eval sets as files: ``<agents_dir>/<app_name>/<eval_set_id>.evalset.json``."""

from __future__ import annotations

import json
import logging
import os
import re
import time
from typing import Any

from pydantic import ValidationError
from typing_extensions import override

from cairn.errors import NotFoundError

from ._eval_sets_manager_utils import (
    add_eval_case_to_eval_set,
    delete_eval_case_from_eval_set,
    get_eval_case_from_eval_set,
    get_eval_set_from_app_and_id,
    update_eval_case_in_eval_set,
)
from ._legacy_eval_files import convert_cases, convert_turns, is_list_of_turns
from ._path_validation import validate_path_segment
from ._validation_errors import first_error_location
from .errors import EvalFileError
from .eval_case import EvalCase
from .eval_set import EvalSet
from .eval_sets_manager import EvalSetsManager

logger = logging.getLogger(__name__)

_EVAL_SET_FILE_EXTENSION = ".evalset.json"
_EVAL_SET_ID = re.compile(r"[a-zA-Z0-9_]+")


def convert_eval_set_to_pydantic_schema(
    eval_set_id: str, eval_set_in_json_format: list[dict[str, Any]]
) -> EvalSet:
    """An EvalSet from the older JSON format: a list of cases, each with ``name``, ``data``
    (its turns: ``query``, ``reference``, ``expected_tool_use``, ...) and ``initial_session``."""
    return convert_cases(eval_set_id, eval_set_in_json_format)


def _parse_eval_set(path: str, content: str, eval_set_id: str) -> EvalSet:
    try:
        data = json.loads(content)
    except json.JSONDecodeError as error:
        raise EvalFileError(
            path=path,
            field=None,
            problem=f"not valid JSON ({error.msg} at line {error.lineno})",
            fix="Fix the JSON syntax.",
        ) from error
    if isinstance(data, list):
        if is_list_of_turns(data):
            return convert_turns(path, data, eval_set_id=eval_set_id)
        return convert_cases(eval_set_id, data, path)
    try:
        return EvalSet.model_validate(data)
    except ValidationError as error:
        field, message = first_error_location(error)
        raise EvalFileError(
            path=path,
            field=field,
            problem=message,
            fix='An eval set reads {"eval_set_id": "...", "eval_cases": [{"eval_id": '
            '"...", "conversation": [{"user_content": {...}, "final_response": {...}}]}]}.',
        ) from error


def load_eval_set_from_file(eval_set_file_path: str, eval_set_id: str) -> EvalSet:
    """The eval set in the file: an ``EvalSet``, or either older format (converted).

    FileNotFoundError when there is no file; EvalFileError naming the field when it is
    malformed.
    """
    with open(eval_set_file_path, encoding="utf-8") as file:
        content = file.read()
    return _parse_eval_set(eval_set_file_path, content, eval_set_id)


def load_test_file(test_file_path: str, initial_session: dict[str, Any] | None = None) -> EvalSet:
    """The eval set of a ``*.test.json`` file (a list of turns, or an EvalSet).

    A list of turns becomes one case named by the file's path, with ``initial_session``
    (``app_name``, ``user_id``, ``state``) as its session input.
    """
    with open(test_file_path, encoding="utf-8") as file:
        content = file.read()
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, list) and is_list_of_turns(data):
        return convert_turns(test_file_path, data, initial_session)
    eval_set = _parse_eval_set(test_file_path, content, os.path.basename(test_file_path))
    if initial_session and isinstance(data, dict):
        raise ValueError(
            f"{test_file_path} is an eval set, whose cases carry their own session_input; "
            "an initial session applies only to the older list-of-turns format. Drop the "
            "initial session, or move it into each case's session_input."
        )
    return eval_set


class LocalEvalSetsManager(EvalSetsManager):
    """Eval sets as ``*.evalset.json`` files in each app's folder under ``agents_dir``."""

    def __init__(self, agents_dir: str) -> None:
        self._agents_dir = agents_dir

    @override
    def get_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet | None:
        path = self._get_eval_set_file_path(app_name, eval_set_id)
        try:
            return load_eval_set_from_file(path, eval_set_id)
        except FileNotFoundError:
            return None

    @override
    def create_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet:
        if not _EVAL_SET_ID.fullmatch(eval_set_id):
            raise ValueError(
                f"Invalid eval set id {eval_set_id!r}: use letters, digits and underscores "
                f"(`{_EVAL_SET_ID.pattern}`)."
            )
        path = self._get_eval_set_file_path(app_name, eval_set_id)
        if os.path.exists(path):
            raise ValueError(f"Eval set `{eval_set_id}` already exists for app `{app_name}`.")
        eval_set = EvalSet(
            eval_set_id=eval_set_id,
            name=eval_set_id,
            eval_cases=[],
            creation_timestamp=time.time(),
        )
        self._write(path, eval_set)
        return eval_set

    @override
    def list_eval_sets(self, app_name: str) -> list[str]:
        validate_path_segment(app_name, "app_name")
        folder = os.path.join(self._agents_dir, app_name)
        try:
            names = os.listdir(folder)
        except FileNotFoundError as error:
            raise NotFoundError(
                f"App `{app_name}` has no folder under {self._agents_dir}; check the app name."
            ) from error
        return sorted(
            name.removesuffix(_EVAL_SET_FILE_EXTENSION)
            for name in names
            if name.endswith(_EVAL_SET_FILE_EXTENSION)
        )

    @override
    def get_eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> EvalCase | None:
        eval_set = self.get_eval_set(app_name, eval_set_id)
        return None if eval_set is None else get_eval_case_from_eval_set(eval_set, eval_case_id)

    @override
    def add_eval_case(self, app_name: str, eval_set_id: str, eval_case: EvalCase) -> None:
        eval_set = get_eval_set_from_app_and_id(self, app_name, eval_set_id)
        self._save(app_name, eval_set_id, add_eval_case_to_eval_set(eval_set, eval_case))

    @override
    def update_eval_case(
        self, app_name: str, eval_set_id: str, updated_eval_case: EvalCase
    ) -> None:
        eval_set = get_eval_set_from_app_and_id(self, app_name, eval_set_id)
        self._save(app_name, eval_set_id, update_eval_case_in_eval_set(eval_set, updated_eval_case))

    @override
    def delete_eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> None:
        eval_set = get_eval_set_from_app_and_id(self, app_name, eval_set_id)
        self._save(app_name, eval_set_id, delete_eval_case_from_eval_set(eval_set, eval_case_id))

    def _get_eval_set_file_path(self, app_name: str, eval_set_id: str) -> str:
        validate_path_segment(app_name, "app_name")
        validate_path_segment(eval_set_id, "eval_set_id")
        return os.path.join(self._agents_dir, app_name, eval_set_id + _EVAL_SET_FILE_EXTENSION)

    def _save(self, app_name: str, eval_set_id: str, eval_set: EvalSet) -> None:
        self._write(self._get_eval_set_file_path(app_name, eval_set_id), eval_set)

    @staticmethod
    def _write(path: str, eval_set: EvalSet) -> None:
        # The same JSON ADK writes: snake_case keys, unset/default/None fields left out.
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = eval_set.model_dump_json(
            indent=2, exclude_unset=True, exclude_defaults=True, exclude_none=True
        )
        tmp = f"{path}.tmp"
        with open(tmp, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(tmp, path)
