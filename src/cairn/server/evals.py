"""The dev server's evaluation: eval sets and results beside each app's folder, cases made
from stored sessions, and runs of a set on the server's own agent and session store.

The HTTP routes (``cairn.server.routes.evals``) only translate; what the eval managers
raise as plain ``ValueError`` or ``NotFoundError`` becomes a typed error here, so that each
answers with its status (404 naming what is missing, 409 for a taken id, 422 for bad input).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from cairn.errors import AlreadyExistsError, InputValidationError
from cairn.errors import NotFoundError as StoreNotFoundError
from cairn.evaluation.base_eval_service import (
    EvaluateConfig,
    EvaluateRequest,
    InferenceConfig,
    InferenceRequest,
    InferenceResult,
)
from cairn.evaluation.divergence import Divergence, first_divergence
from cairn.evaluation.errors import EvalFileError
from cairn.evaluation.eval_case import EvalCase
from cairn.evaluation.eval_config import (
    UserSimulatorConfig,
    append_default_efficiency_metrics,
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)
from cairn.evaluation.eval_metrics import (
    EvalMetric,
    EvalMetricResult,
    EvalMetricResultPerInvocation,
    EvalStatus,
    MetricInfo,
)
from cairn.evaluation.eval_result import EvalCaseResult, EvalSetResult
from cairn.evaluation.eval_set import EvalSet
from cairn.evaluation.local_eval_service import LocalEvalService
from cairn.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager
from cairn.evaluation.local_eval_sets_manager import LocalEvalSetsManager
from cairn.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY
from cairn.evaluation.recorded_tools import recorded_tools_for
from cairn.evaluation.session_cases import eval_case_from_session
from cairn.evaluation.simulation.user_simulator_provider import UserSimulatorProvider
from cairn.server.access import Principal, check_user
from cairn.server.errors import InvalidRequestError, NotFoundError
from cairn.server.registry import AppRegistry
from cairn.server.services import Services


class EvalSetNotFoundError(NotFoundError):
    """The path names an eval set the app does not have (404)."""

    def __init__(self, app_name: str, eval_set_id: str, known: list[str]) -> None:
        self.eval_set_id = eval_set_id
        names = ", ".join(repr(n) for n in known) or "none"
        super().__init__(
            f"app {app_name!r} has no eval set {eval_set_id!r} (its eval sets: {names}). "
            f"Create it with POST /dev/apps/{app_name}/eval-sets, or list them with GET "
            f"/dev/apps/{app_name}/eval-sets."
        )


class EvalCaseNotFoundError(NotFoundError):
    """The path names an eval case the eval set does not have (404)."""

    def __init__(self, eval_set: EvalSet, eval_case_ids: list[str]) -> None:
        self.eval_case_ids = eval_case_ids
        known = ", ".join(repr(c.eval_id) for c in eval_set.eval_cases) or "none"
        missing = ", ".join(repr(i) for i in eval_case_ids)
        super().__init__(
            f"eval set {eval_set.eval_set_id!r} has no eval case {missing} (its cases: "
            f"{known}). Add one with POST .../eval-sets/{eval_set.eval_set_id}/add-session."
        )


class EvalResultNotFoundError(NotFoundError):
    """The path names an eval result the app has not saved (404)."""

    def __init__(self, app_name: str, eval_result_id: str) -> None:
        self.eval_result_id = eval_result_id
        super().__init__(
            f"app {app_name!r} has no saved eval result {eval_result_id!r}. GET "
            f"/dev/apps/{app_name}/eval-results lists the saved ones (a run saves one)."
        )


class EvalIdTakenError(AlreadyExistsError):
    """An eval set id, or an eval case id in its set, that is already taken (409)."""


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class DivergenceJSON(_Camel):
    """cairn's first divergence of a case's run from its recorded conversation."""

    invocation_index: int
    event_index: int | None
    kind: str
    expected: str
    actual: str
    description: str
    """``Divergence.describe()``: one line, invocations and events numbered from 1."""

    @classmethod
    def of(cls, divergence: Divergence) -> DivergenceJSON:
        return cls(
            invocation_index=divergence.invocation_index,
            event_index=divergence.event_index,
            kind=divergence.kind.value,
            expected=divergence.expected,
            actual=divergence.actual,
            description=divergence.describe(),
        )


class RunEvalResult(_Camel):
    """ADK's ``RunEvalResult`` (one case of a run), and cairn's ``divergence``."""

    eval_set_file: str
    eval_set_id: str
    eval_id: str
    final_eval_status: EvalStatus
    eval_metric_results: list[tuple[EvalMetric, EvalMetricResult]] = Field(default_factory=list)
    overall_eval_metric_results: list[EvalMetricResult]
    eval_metric_result_per_invocation: list[EvalMetricResultPerInvocation]
    user_id: str
    session_id: str
    divergence: DivergenceJSON | None = None
    """Where the run first departed from the case's conversation; None when it did not
    (or when the case has no recorded conversation, or its run failed)."""
    error_message: str | None = None
    """Why the case's run failed (cairn; None when it ran)."""


class RunEvalResponse(_Camel):
    run_eval_results: list[RunEvalResult]


class RunChoice(_Camel):
    """What to run: the cases (empty: every case), the metrics, the simulated user."""

    eval_case_ids: list[str] = Field(default_factory=list)
    eval_metrics: list[EvalMetric]
    user_simulator_config: dict[str, Any] | None = None
    reuse_tool_results: bool = False
    """cairn: answer tool calls from each case's recording while the agent follows it."""


@contextlib.contextmanager
def _translate() -> Iterator[None]:
    """The managers' plain ``ValueError`` (a bad id) as a 422."""
    try:
        yield
    except (InvalidRequestError, NotFoundError, AlreadyExistsError, EvalFileError):
        raise  # a damaged file beside the app is the server's fault: a 500, path logged
    except ValueError as error:
        raise InvalidRequestError(str(error)) from None


@dataclasses.dataclass(frozen=True)
class _Place:
    """Where an app's eval files are: its managers, and the folder name they know it by."""

    name: str
    sets: LocalEvalSetsManager
    results: LocalEvalSetResultsManager


class EvalWorkspace:
    """The eval sets and results of the apps a dev server serves, and their runs."""

    def __init__(self, apps: AppRegistry, services: Services) -> None:
        self._apps = apps
        self._services = services

    async def _place(self, app_name: str) -> _Place:
        folder = await self._apps.folder(app_name)
        root = str(folder.parent)
        return _Place(
            name=folder.name,
            sets=LocalEvalSetsManager(agents_dir=root),
            results=LocalEvalSetResultsManager(agents_dir=root),
        )

    # ------------------------------------------------------------ eval sets and cases

    async def list_eval_sets(self, app_name: str) -> list[str]:
        place = await self._place(app_name)
        try:
            return place.sets.list_eval_sets(place.name)
        except StoreNotFoundError:
            return []

    async def create_eval_set(self, app_name: str, eval_set_id: str) -> EvalSet:
        place = await self._place(app_name)
        with _translate():
            if place.sets.get_eval_set(place.name, eval_set_id) is not None:
                raise EvalIdTakenError(
                    f"app {app_name!r} already has an eval set {eval_set_id!r}; choose another "
                    "id, or add cases to it."
                )
            return place.sets.create_eval_set(place.name, eval_set_id)

    async def eval_set(self, app_name: str, eval_set_id: str) -> EvalSet:
        place = await self._place(app_name)
        with _translate():
            found = place.sets.get_eval_set(place.name, eval_set_id)
        if found is None:
            raise EvalSetNotFoundError(app_name, eval_set_id, await self.list_eval_sets(app_name))
        return found

    async def eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> EvalCase:
        eval_set = await self.eval_set(app_name, eval_set_id)
        for case in eval_set.eval_cases:
            if case.eval_id == eval_case_id:
                return case
        raise EvalCaseNotFoundError(eval_set, [eval_case_id])

    async def update_eval_case(self, app_name: str, eval_set_id: str, case: EvalCase) -> None:
        await self.eval_case(app_name, eval_set_id, case.eval_id)
        place = await self._place(app_name)
        with _translate():
            place.sets.update_eval_case(place.name, eval_set_id, case)

    async def delete_eval_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> None:
        await self.eval_case(app_name, eval_set_id, eval_case_id)
        place = await self._place(app_name)
        with _translate():
            place.sets.delete_eval_case(place.name, eval_set_id, eval_case_id)

    async def add_session(
        self, app_name: str, eval_set_id: str, *, eval_id: str, user_id: str, session_id: str
    ) -> EvalCase:
        """The session, as it ran, added to the eval set as the case ``eval_id``."""
        if not eval_id.strip():
            raise InvalidRequestError("evalId must not be empty: it names the new eval case")
        eval_set = await self.eval_set(app_name, eval_set_id)
        if any(case.eval_id == eval_id for case in eval_set.eval_cases):
            raise EvalIdTakenError(
                f"eval set {eval_set_id!r} already has an eval case {eval_id!r}; choose another "
                "evalId, or delete that case first."
            )
        store = self._services.session_service
        session = await store.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
        initial = await store.get_initial_state(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        if session is None or initial is None:
            raise NotFoundError(
                f"user {user_id!r} has no session {session_id!r} in app {app_name!r}; GET "
                f"/apps/{app_name}/users/{user_id}/sessions lists theirs."
            )
        try:
            case = eval_case_from_session(session, eval_id=eval_id, initial_state=initial)
        except InputValidationError as error:
            raise InvalidRequestError(str(error)) from None
        place = await self._place(app_name)
        with _translate():
            place.sets.add_eval_case(place.name, eval_set_id, case)
        return case

    # ------------------------------------------------------------ results and metrics

    async def list_eval_results(self, app_name: str) -> list[str]:
        place = await self._place(app_name)
        return sorted(place.results.list_eval_set_results(place.name))

    async def eval_result(self, app_name: str, eval_result_id: str) -> EvalSetResult:
        place = await self._place(app_name)
        try:
            with _translate():
                return place.results.get_eval_set_result(place.name, eval_result_id)
        except StoreNotFoundError:
            raise EvalResultNotFoundError(app_name, eval_result_id) from None

    @staticmethod
    def metrics_info() -> list[MetricInfo]:
        return DEFAULT_METRIC_EVALUATOR_REGISTRY.get_registered_metrics()

    @staticmethod
    def default_eval_metrics() -> list[EvalMetric]:
        """The criteria ``cairn eval`` runs without a config (the efficiency metrics, which
        take no threshold, are added to every run)."""
        informational = {m.metric_name for m in append_default_efficiency_metrics([])}
        config = get_evaluation_criteria_or_default(None)
        return [
            m for m in get_eval_metrics_from_config(config) if m.metric_name not in informational
        ]

    # ------------------------------------------------------------ runs

    async def run(
        self, caller: Principal, app_name: str, eval_set_id: str, choice: RunChoice
    ) -> list[RunEvalResult]:
        """Run the chosen cases of the set on the app's agent, each in a new session of the
        server's store, score them, save the results and answer each case's result."""
        eval_set = await self.eval_set(app_name, eval_set_id)
        cases = _chosen(eval_set, choice.eval_case_ids)
        for case in cases:
            check_user(caller, _runs_as(case))
        _check_metrics(choice.eval_metrics)
        simulator = _simulator(choice.user_simulator_config)
        runner = await self._apps.runner(app_name)
        place = await self._place(app_name)
        service = LocalEvalService(
            root_agent=runner.agent,
            eval_sets_manager=place.sets,
            session_service=self._services.session_service,
            artifact_service=self._services.artifact_service,
            memory_service=self._services.memory_service,
            eval_set_results_manager=place.results,
            user_simulator_provider=simulator,
            app=runner.app,
            plugins_for_case=recorded_tools_for if choice.reuse_tool_results else None,
        )
        inferences: list[InferenceResult] = []
        request = InferenceRequest(
            app_name=place.name,
            eval_set_id=eval_set_id,
            eval_case_ids=[c.eval_id for c in cases],
            inference_config=InferenceConfig(),
        )
        async with contextlib.aclosing(service.perform_inference(request)) as running:
            async for inference in running:
                inferences.append(inference)
        evaluate = EvaluateRequest(
            inference_results=inferences,
            evaluate_config=EvaluateConfig(
                eval_metrics=append_default_efficiency_metrics(choice.eval_metrics)
            ),
        )
        scored: list[EvalCaseResult] = []
        async with contextlib.aclosing(service.evaluate(evaluate)) as scoring:
            async for result in scoring:
                scored.append(result)
        by_id = {i.eval_case_id: i for i in inferences}
        order = {case.eval_id: index for index, case in enumerate(cases)}
        scored.sort(key=lambda r: order.get(r.eval_id, len(order)))
        cases_by_id = {case.eval_id: case for case in cases}
        return [
            _run_result(eval_set_id, r, cases_by_id.get(r.eval_id), by_id.get(r.eval_id))
            for r in scored
        ]


_UNNAMED_USER = "test_user_id"
"""The user a case without a ``session_input`` runs as (the eval service's default)."""


def _runs_as(case: EvalCase) -> str:
    """The user whose new session the case runs in."""
    user = case.session_input.user_id if case.session_input else None
    return user or _UNNAMED_USER


def _chosen(eval_set: EvalSet, eval_case_ids: list[str]) -> list[EvalCase]:
    if not eval_case_ids:
        if not eval_set.eval_cases:
            raise InvalidRequestError(
                f"eval set {eval_set.eval_set_id!r} has no eval cases to run; add one first "
                f"(POST .../eval-sets/{eval_set.eval_set_id}/add-session)."
            )
        return list(eval_set.eval_cases)
    wanted = list(dict.fromkeys(eval_case_ids))
    known = {case.eval_id for case in eval_set.eval_cases}
    missing = [i for i in wanted if i not in known]
    if missing:
        raise EvalCaseNotFoundError(eval_set, missing)
    return [case for case in eval_set.eval_cases if case.eval_id in set(wanted)]


def _check_metrics(metrics: list[EvalMetric]) -> None:
    known = sorted(info.metric_name for info in EvalWorkspace.metrics_info())
    for metric in metrics:
        if metric.metric_name not in known:
            raise InvalidRequestError(
                f"evalMetrics names metric {metric.metric_name!r}, which no evaluator is "
                f"registered for (metrics: {', '.join(known)}). GET .../metrics-info lists them."
            )
        threshold = metric.criterion.threshold if metric.criterion else metric.threshold
        if threshold is not None and not 0 <= threshold <= 1 and _bounded(metric.metric_name):
            raise InvalidRequestError(
                f"the threshold of {metric.metric_name!r} is {threshold:g}; its scores lie "
                "between 0 and 1, so give a threshold in that range."
            )


def _bounded(metric_name: str) -> bool:
    for info in EvalWorkspace.metrics_info():
        if info.metric_name == metric_name:
            interval = info.metric_value_info.interval
            return interval is not None and interval.min_value == 0 and interval.max_value == 1
    return False


def _simulator(config: dict[str, Any] | None) -> UserSimulatorProvider:
    if config is None:
        return UserSimulatorProvider()
    try:
        typed: Any = TypeAdapter(UserSimulatorConfig).validate_python(config)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidRequestError(
            f"userSimulatorConfig{'.' + where if where else ''}: {first['msg']}"
        ) from None
    return UserSimulatorProvider(user_simulator_config=typed)


def _run_result(
    eval_set_id: str,
    result: EvalCaseResult,
    case: EvalCase | None,
    inference: InferenceResult | None,
) -> RunEvalResult:
    divergence = None
    actual = inference.inferences if inference else None
    if case is not None and case.conversation is not None and actual is not None:
        found = first_divergence(case.conversation, actual)
        divergence = DivergenceJSON.of(found) if found else None
    return RunEvalResult(
        eval_set_file=eval_set_id,  # as cairn's service names it (the file's id)
        eval_set_id=eval_set_id,
        eval_id=result.eval_id,
        final_eval_status=result.final_eval_status,
        overall_eval_metric_results=result.overall_eval_metric_results,
        eval_metric_result_per_invocation=result.eval_metric_result_per_invocation,
        user_id=result.user_id or "",
        session_id=result.session_id,
        divergence=divergence,
        error_message=inference.error_message if inference else None,
    )
