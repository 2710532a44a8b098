"""Eval results kept in the session store, beside the sessions the cases ran in.

Each EvalSetResult is one user-scoped artifact of the app (user ``EVAL_RESULTS_USER``,
filename ``user:<eval_set_result_id>.evalset_result.json``) holding ADK's result JSON, in
any artifact service: ``SessionStoreArtifactService`` puts it in the store's database, so
a CI job on PostgreSQL leaves its results where its sessions are.

The methods are async (the artifact services are); ``LocalEvalService`` saves through the
sync ``EvalSetResultsManager`` interface, so ``cairn eval --store`` saves here itself.
"""

from __future__ import annotations

from google.genai import types

from cairn.artifacts.base_artifact_service import BaseArtifactService
from cairn.errors import NotFoundError

from ._eval_set_results_manager_utils import create_eval_set_result, parse_eval_set_result_json
from .eval_result import EvalCaseResult, EvalSetResult

EVAL_RESULTS_USER = "cairn-eval"
"""The user the results are kept under (no person: a name no client logs in with)."""

_PREFIX = "user:"
_SUFFIX = ".evalset_result.json"


def _filename(eval_set_result_id: str) -> str:
    return f"{_PREFIX}{eval_set_result_id}{_SUFFIX}"


class StoreEvalSetResultsManager:
    """Saves, reads and lists an app's eval results as artifacts."""

    def __init__(self, artifact_service: BaseArtifactService) -> None:
        self._artifacts = artifact_service

    async def save_eval_set_result(
        self, app_name: str, eval_set_id: str, eval_case_results: list[EvalCaseResult]
    ) -> EvalSetResult:
        """Saves a new EvalSetResult made of the case results, and returns it."""
        result = create_eval_set_result(app_name, eval_set_id, eval_case_results)
        await self._artifacts.save_artifact(
            app_name=app_name,
            user_id=EVAL_RESULTS_USER,
            filename=_filename(result.eval_set_result_id),
            artifact=types.Part.from_bytes(
                data=result.model_dump_json(exclude_none=True).encode("utf-8"),
                mime_type="application/json",
            ),
        )
        return result

    async def get_eval_set_result(self, app_name: str, eval_set_result_id: str) -> EvalSetResult:
        """The saved result; NotFoundError naming it when there is none."""
        part = await self._artifacts.load_artifact(
            app_name=app_name, user_id=EVAL_RESULTS_USER, filename=_filename(eval_set_result_id)
        )
        if part is None or part.inline_data is None or part.inline_data.data is None:
            raise NotFoundError(
                f"no eval result {eval_set_result_id!r} of app {app_name!r} in the store; "
                "list_eval_set_results gives the saved ones."
            )
        return parse_eval_set_result_json(part.inline_data.data)

    async def list_eval_set_results(self, app_name: str) -> list[str]:
        """The ids of the app's saved results, oldest first (ids end in their time)."""
        names = await self._artifacts.list_artifact_keys(
            app_name=app_name, user_id=EVAL_RESULTS_USER
        )
        ids = [
            name[len(_PREFIX) : -len(_SUFFIX)]
            for name in names
            if name.startswith(_PREFIX) and name.endswith(_SUFFIX)
        ]
        return sorted(ids, key=lambda i: float(i.rsplit("_", 1)[-1]) if _ends_in_time(i) else 0)


def _ends_in_time(eval_set_result_id: str) -> bool:
    try:
        float(eval_set_result_id.rsplit("_", 1)[-1])
    except ValueError:
        return False
    return True
