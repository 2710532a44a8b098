"""The interface of eval set storage."""

from __future__ import annotations

from abc import ABC, abstractmethod

from .eval_case import EvalCase
from .eval_set import EvalSet


class EvalSetsManager(ABC):
    """Creates, reads and edits the eval sets of apps."""

    @abstractmethod
    def get_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet | None:
        """The eval set, or None when the app has none of that id."""

    @abstractmethod
    def create_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet:
        """Creates an empty eval set; ValueError for an invalid id or one that exists.

        A valid id is one or more letters, digits and underscores.
        """

    @abstractmethod
    def list_eval_sets(self, app_name: str) -> list[str]:
        """The ids of the app's eval sets (NotFoundError where the app must exist)."""

    @abstractmethod
    def get_eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> EvalCase | None:
        """The eval case, or None."""

    @abstractmethod
    def add_eval_case(self, app_name: str, eval_set_id: str, eval_case: EvalCase) -> None:
        """Adds a case; NotFoundError without the set, ValueError when the case id is taken."""

    @abstractmethod
    def update_eval_case(
        self, app_name: str, eval_set_id: str, updated_eval_case: EvalCase
    ) -> None:
        """Replaces the case of the same id; NotFoundError without the set or the case."""

    @abstractmethod
    def delete_eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> None:
        """Deletes a case; NotFoundError without the set or the case."""
