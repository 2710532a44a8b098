"""The interface of eval result storage."""

from __future__ import annotations

from abc import ABC, abstractmethod

from .eval_result import EvalCaseResult, EvalSetResult


class EvalSetResultsManager(ABC):
    """Saves and reads the results of eval set runs."""

    @abstractmethod
    def save_eval_set_result(
        self, app_name: str, eval_set_id: str, eval_case_results: list[EvalCaseResult]
    ) -> None:
        """Saves a new EvalSetResult made of the case results."""

    @abstractmethod
    def get_eval_set_result(self, app_name: str, eval_set_result_id: str) -> EvalSetResult:
        """The saved result; NotFoundError when there is none."""

    @abstractmethod
    def list_eval_set_results(self, app_name: str) -> list[str]:
        """The ids of the app's saved results."""
