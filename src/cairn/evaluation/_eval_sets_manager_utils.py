"""Eval-case edits shared by the eval set managers."""

from __future__ import annotations

from cairn.errors import NotFoundError

from .eval_case import EvalCase
from .eval_set import EvalSet
from .eval_sets_manager import EvalSetsManager


def get_eval_set_from_app_and_id(
    eval_sets_manager: EvalSetsManager, app_name: str, eval_set_id: str
) -> EvalSet:
    """The eval set; NotFoundError when there is none."""
    eval_set = eval_sets_manager.get_eval_set(app_name, eval_set_id)
    if eval_set is None:
        raise NotFoundError(
            f"Eval set `{eval_set_id}` of app `{app_name}` not found; create it first "
            "(create_eval_set)."
        )
    return eval_set


def get_eval_case_from_eval_set(eval_set: EvalSet, eval_case_id: str) -> EvalCase | None:
    """The case of that id in the set, or None."""
    return next((case for case in eval_set.eval_cases if case.eval_id == eval_case_id), None)


def _case_not_found(eval_set: EvalSet, eval_case_id: str) -> NotFoundError:
    return NotFoundError(
        f"Eval case `{eval_case_id}` not found in eval set `{eval_set.eval_set_id}`; "
        "add it first (add_eval_case)."
    )


def add_eval_case_to_eval_set(eval_set: EvalSet, eval_case: EvalCase) -> EvalSet:
    """The set with the case appended; ValueError when its id is taken."""
    if get_eval_case_from_eval_set(eval_set, eval_case.eval_id) is not None:
        raise ValueError(
            f"Eval case `{eval_case.eval_id}` already exists in eval set "
            f"`{eval_set.eval_set_id}`; update it (update_eval_case) or choose another id."
        )
    eval_set.eval_cases.append(eval_case)
    return eval_set


def update_eval_case_in_eval_set(eval_set: EvalSet, updated_eval_case: EvalCase) -> EvalSet:
    """The set with the case of the same id replaced; NotFoundError when it has none."""
    for index, case in enumerate(eval_set.eval_cases):
        if case.eval_id == updated_eval_case.eval_id:
            eval_set.eval_cases[index] = updated_eval_case
            return eval_set
    raise _case_not_found(eval_set, updated_eval_case.eval_id)


def delete_eval_case_from_eval_set(eval_set: EvalSet, eval_case_id: str) -> EvalSet:
    """The set without the case; NotFoundError when it has none."""
    case = get_eval_case_from_eval_set(eval_set, eval_case_id)
    if case is None:
        raise _case_not_found(eval_set, eval_case_id)
    eval_set.eval_cases.remove(case)
    return eval_set
