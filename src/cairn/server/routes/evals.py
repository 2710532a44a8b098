"""ADK's dev-server evaluation routes (``cairn web`` only): eval sets and cases, a case from
a session, runs of a set, saved results, and the metrics; at ADK's paths, with its JSON."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from cairn.evaluation.eval_case import EvalCase
from cairn.evaluation.eval_metrics import EvalMetric, MetricInfo
from cairn.evaluation.eval_result import EvalSetResult
from cairn.evaluation.eval_set import EvalSet
from cairn.server.access import check_user
from cairn.server.auth import Caller
from cairn.server.context import Server
from cairn.server.errors import InvalidRequestError
from cairn.server.evals import EvalWorkspace, RunChoice, RunEvalResponse, RunEvalResult
from cairn.server.models import SERVER_ERRORS, errors, ok

router = APIRouter(tags=["evaluation"], responses=SERVER_ERRORS)
APP = "/dev/apps/{app_name}"
SET = APP + "/eval-sets/{eval_set_id}"
LEGACY_SET = APP + "/eval_sets/{eval_set_id}"


class _Body(BaseModel):
    """A request body as ADK's dev server reads it: camelCase (snake_case accepted)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class CreateEvalSetRequest(_Body):
    eval_set: EvalSet


class AddSessionToEvalSetRequest(_Body):
    eval_id: str
    session_id: str
    user_id: str


class LiveModelConfigJSON(_Body):
    timeout_seconds: int | None = None


class RunEvalRequest(_Body):
    """ADK's ``RunEvalRequest``: the cases (``evalCaseIds``; empty: every case) and metrics."""

    eval_ids: list[str] = Field(default_factory=list, description="Deprecated: evalCaseIds.")
    eval_case_ids: list[str] = Field(default_factory=list)
    eval_metrics: list[EvalMetric]
    live_model_config: LiveModelConfigJSON | None = None
    user_simulator_config: dict[str, Any] | None = None
    reuse_tool_results: bool = Field(
        default=False,
        description="cairn: answer tool calls from each case's recorded results while the "
        "agent makes the recorded calls (`cairn eval --reuse-tool-results`).",
    )


class ListEvalSetsResponse(_Body):
    eval_set_ids: list[str]


class ListEvalResultsResponse(_Body):
    eval_result_ids: list[str]


class ListMetricsInfoResponse(_Body):
    metrics_info: list[MetricInfo]


class DefaultEvalMetricsResponse(_Body):
    eval_metrics: list[EvalMetric]


def _workspace(ctx: Server) -> EvalWorkspace:
    return EvalWorkspace(ctx.apps, ctx.services)


Workspace = Annotated[EvalWorkspace, Depends(_workspace)]


def _json(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


# ------------------------------------------------------------------ eval sets


@router.post(
    APP + "/eval-sets",
    summary="Create an eval set (409 if its id is taken)",
    response_model=None,
    responses=ok(EvalSet, 404, 409, 422),
)
async def create_eval_set(app_name: str, body: CreateEvalSetRequest, evals: Workspace) -> Any:
    return _json(await evals.create_eval_set(app_name, body.eval_set.eval_set_id))


@router.post(
    LEGACY_SET,
    summary="Create an eval set of this id (ADK's deprecated form)",
    responses=errors(404, 409, 422),
)
async def create_eval_set_legacy(app_name: str, eval_set_id: str, evals: Workspace) -> None:
    await evals.create_eval_set(app_name, eval_set_id)


@router.get(
    APP + "/eval-sets",
    summary="The app's eval set ids",
    response_model=None,
    responses=ok(ListEvalSetsResponse, 404),
)
async def list_eval_sets(app_name: str, evals: Workspace) -> Any:
    return _json(ListEvalSetsResponse(eval_set_ids=await evals.list_eval_sets(app_name)))


@router.get(
    APP + "/eval_sets",
    summary="The app's eval set ids (ADK's deprecated form)",
    responses=errors(404),
)
async def list_eval_sets_legacy(app_name: str, evals: Workspace) -> list[str]:
    return await evals.list_eval_sets(app_name)


# ------------------------------------------------------------------ eval cases


@router.post(
    SET + "/add-session",
    summary="Add a stored session, as it ran, to the eval set as a new eval case",
    responses=errors(404, 409, 422),
)
@router.post(LEGACY_SET + "/add_session", include_in_schema=False)
async def add_session_to_eval_set(
    app_name: str,
    eval_set_id: str,
    body: AddSessionToEvalSetRequest,
    evals: Workspace,
    caller: Caller,
) -> None:
    check_user(caller, body.user_id)
    await evals.add_session(
        app_name,
        eval_set_id,
        eval_id=body.eval_id,
        user_id=body.user_id,
        session_id=body.session_id,
    )


@router.get(
    LEGACY_SET + "/evals",
    summary="The eval case ids of an eval set, sorted",
    responses=errors(404),
)
async def list_evals_in_eval_set(app_name: str, eval_set_id: str, evals: Workspace) -> list[str]:
    eval_set = await evals.eval_set(app_name, eval_set_id)
    return sorted(case.eval_id for case in eval_set.eval_cases)


@router.get(
    SET + "/eval-cases/{eval_case_id}",
    summary="An eval case",
    response_model=None,
    responses=ok(EvalCase, 404),
)
@router.get(LEGACY_SET + "/evals/{eval_case_id}", response_model=None, include_in_schema=False)
async def get_eval(app_name: str, eval_set_id: str, eval_case_id: str, evals: Workspace) -> Any:
    return _json(await evals.eval_case(app_name, eval_set_id, eval_case_id))


@router.put(
    SET + "/eval-cases/{eval_case_id}",
    summary="Replace an eval case (its evalId, if given, must be the path's)",
    responses=errors(404, 422),
)
@router.put(LEGACY_SET + "/evals/{eval_case_id}", include_in_schema=False)
async def update_eval(
    app_name: str,
    eval_set_id: str,
    eval_case_id: str,
    evals: Workspace,
    updated: Annotated[dict[str, Any], Body()],
) -> None:
    given = updated.get("evalId", updated.get("eval_id"))
    if given not in (None, "", eval_case_id):
        raise InvalidRequestError(
            f"the body's evalId {given!r} differs from the path's eval case {eval_case_id!r}; "
            "leave it out or make them the same (a case is renamed by adding it anew)."
        )
    case = _eval_case({**updated, "evalId": eval_case_id})
    await evals.update_eval_case(app_name, eval_set_id, case)


@router.delete(
    SET + "/eval-cases/{eval_case_id}",
    summary="Delete an eval case",
    responses=errors(404),
)
@router.delete(LEGACY_SET + "/evals/{eval_case_id}", include_in_schema=False)
async def delete_eval(app_name: str, eval_set_id: str, eval_case_id: str, evals: Workspace) -> None:
    await evals.delete_eval_case(app_name, eval_set_id, eval_case_id)


def _eval_case(data: dict[str, Any]) -> EvalCase:
    data.pop("eval_id", None)
    try:
        return EvalCase.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the body"
        raise InvalidRequestError(f"the eval case is not valid: {where}: {first['msg']}") from None


# ------------------------------------------------------------------ runs


@router.post(
    SET + "/run",
    summary="Run the eval set's cases (or evalCaseIds) and score them; each case runs in a "
    "new session of the server's store",
    response_model=None,
    responses=ok(RunEvalResponse, 404, 409, 422),
)
async def run_eval(
    app_name: str, eval_set_id: str, body: RunEvalRequest, evals: Workspace, caller: Caller
) -> Any:
    results = await _run(app_name, eval_set_id, body, evals, caller)
    return {"runEvalResults": results}


@router.post(
    LEGACY_SET + "/run_eval",
    summary="Run the eval set (ADK's deprecated form: the case results as a list)",
    response_model=None,
    responses=ok(list[RunEvalResult], 404, 409, 422),
)
async def run_eval_legacy(
    app_name: str, eval_set_id: str, body: RunEvalRequest, evals: Workspace, caller: Caller
) -> Any:
    return await _run(app_name, eval_set_id, body, evals, caller)


async def _run(
    app_name: str, eval_set_id: str, body: RunEvalRequest, evals: EvalWorkspace, caller: Any
) -> list[Any]:
    """Each case result's JSON: ADK's fields (None ones left out) and ``divergence``, null
    when the run followed the recorded conversation."""
    if body.live_model_config is not None:
        raise InvalidRequestError(
            "liveModelConfig: cairn does not run eval cases on live (bidirectional streaming) "
            "models; leave it out to run them as ordinary invocations."
        )
    choice = RunChoice(
        eval_case_ids=body.eval_case_ids or body.eval_ids,
        eval_metrics=body.eval_metrics,
        user_simulator_config=body.user_simulator_config,
        reuse_tool_results=body.reuse_tool_results,
    )
    results = await evals.run(caller, app_name, eval_set_id, choice)
    return [
        {**_json(result), "divergence": _json(result.divergence) if result.divergence else None}
        for result in results
    ]


# ------------------------------------------------------------------ results and metrics


@router.get(
    APP + "/eval-results/{eval_result_id}",
    summary="A saved eval result (one run of an eval set)",
    response_model=None,
    responses=ok(EvalSetResult, 404, 422),
)
@router.get(APP + "/eval_results/{eval_result_id}", response_model=None, include_in_schema=False)
async def get_eval_result(app_name: str, eval_result_id: str, evals: Workspace) -> Any:
    return _json(await evals.eval_result(app_name, eval_result_id))


@router.get(
    APP + "/eval-results",
    summary="The app's saved eval result ids, sorted",
    response_model=None,
    responses=ok(ListEvalResultsResponse, 404),
)
async def list_eval_results(app_name: str, evals: Workspace) -> Any:
    ids = await evals.list_eval_results(app_name)
    return _json(ListEvalResultsResponse(eval_result_ids=ids))


@router.get(APP + "/eval_results", include_in_schema=False, responses=errors(404))
async def list_eval_results_legacy(app_name: str, evals: Workspace) -> list[str]:
    return await evals.list_eval_results(app_name)


@router.get(
    APP + "/metrics-info",
    summary="Every registered eval metric",
    response_model=None,
    responses=ok(ListMetricsInfoResponse, 404),
)
async def list_metrics_info(app_name: str, ctx: Server) -> Any:
    await ctx.apps.check(app_name)
    return _json(ListMetricsInfoResponse(metrics_info=EvalWorkspace.metrics_info()))


@router.get(
    "/cairn" + APP.removeprefix("/dev") + "/eval-metrics",
    tags=["cairn"],
    summary="The criteria `cairn eval` runs by default (thresholds a run may change)",
    response_model=None,
    responses=ok(DefaultEvalMetricsResponse, 404),
)
async def default_eval_metrics(app_name: str, ctx: Server) -> Any:
    await ctx.apps.check(app_name)
    metrics = EvalWorkspace.default_eval_metrics()
    return _json(DefaultEvalMetricsResponse(eval_metrics=metrics))


__all__ = ["router"]
