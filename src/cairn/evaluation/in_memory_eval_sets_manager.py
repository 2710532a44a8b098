"""Eval sets kept in memory (for tests, and where files are not wanted)."""

from __future__ import annotations

import time

from typing_extensions import override

from cairn.errors import NotFoundError

from ._eval_sets_manager_utils import (
    add_eval_case_to_eval_set,
    delete_eval_case_from_eval_set,
    get_eval_case_from_eval_set,
    update_eval_case_in_eval_set,
)
from .eval_case import EvalCase
from .eval_set import EvalSet
from .eval_sets_manager import EvalSetsManager


class InMemoryEvalSetsManager(EvalSetsManager):
    """Eval sets in a dictionary, per app; nothing is written anywhere."""

    def __init__(self) -> None:
        self._eval_sets: dict[str, dict[str, EvalSet]] = {}

    def _app(self, app_name: str) -> dict[str, EvalSet]:
        return self._eval_sets.setdefault(app_name, {})

    def _existing(self, app_name: str, eval_set_id: str) -> EvalSet:
        eval_set = self._app(app_name).get(eval_set_id)
        if eval_set is None:
            raise NotFoundError(
                f"Eval set `{eval_set_id}` of app `{app_name}` not found; create it first "
                "(create_eval_set)."
            )
        return eval_set

    @override
    def get_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet | None:
        return self._app(app_name).get(eval_set_id)

    @override
    def create_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet:
        sets = self._app(app_name)
        if eval_set_id in sets:
            raise ValueError(f"Eval set `{eval_set_id}` already exists for app `{app_name}`.")
        sets[eval_set_id] = EvalSet(
            eval_set_id=eval_set_id, eval_cases=[], creation_timestamp=time.time()
        )
        return sets[eval_set_id]

    @override
    def list_eval_sets(self, app_name: str) -> list[str]:
        return list(self._eval_sets.get(app_name, {}))

    @override
    def get_eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> EvalCase | None:
        eval_set = self._eval_sets.get(app_name, {}).get(eval_set_id)
        return None if eval_set is None else get_eval_case_from_eval_set(eval_set, eval_case_id)

    @override
    def add_eval_case(self, app_name: str, eval_set_id: str, eval_case: EvalCase) -> None:
        add_eval_case_to_eval_set(self._existing(app_name, eval_set_id), eval_case)

    @override
    def update_eval_case(
        self, app_name: str, eval_set_id: str, updated_eval_case: EvalCase
    ) -> None:
        update_eval_case_in_eval_set(self._existing(app_name, eval_set_id), updated_eval_case)

    @override
    def delete_eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> None:
        delete_eval_case_from_eval_set(self._existing(app_name, eval_set_id), eval_case_id)
