"""The eval service that runs in this process: cases run concurrently, each on its own
session of the session service given (in memory by default, any cairn store on request)."""

from __future__ import annotations

import asyncio
import inspect
import logging
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import TypeVar

from cairn.agents.base_agent import BaseAgent
from cairn.apps.app import App
from cairn.artifacts.base_artifact_service import BaseArtifactService
from cairn.artifacts.in_memory_artifact_service import InMemoryArtifactService
from cairn.errors import NotFoundError
from cairn.memory.base_memory_service import BaseMemoryService
from cairn.plugins.base_plugin import BasePlugin
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.in_memory_session_service import InMemorySessionService

from .base_eval_service import (
    BaseEvalService,
    EvaluateConfig,
    EvaluateRequest,
    InferenceRequest,
    InferenceResult,
    InferenceStatus,
)
from .divergence import first_divergence
from .eval_case import ConversationScenario, EvalCase, Invocation
from .eval_metrics import (
    EvalMetric,
    EvalMetricResult,
    EvalMetricResultDetails,
    EvalMetricResultPerInvocation,
)
from .eval_result import EvalCaseResult
from .eval_rubrics import Rubric
from .eval_set_results_manager import EvalSetResultsManager
from .eval_sets_manager import EvalSetsManager
from .evaluation_generator import EvaluationGenerator
from .evaluator import EvalStatus, EvaluationResult, PerInvocationResult
from .metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY, MetricEvaluatorRegistry
from .simulation.user_simulator_provider import UserSimulatorProvider

logger = logging.getLogger(__name__)

EVAL_SESSION_ID_PREFIX = "cairn-eval-session-"
_DEFAULT_USER_ID = "test_user_id"
_T = TypeVar("_T")

PluginsForCase = Callable[[EvalCase], Sequence[BasePlugin]]
"""The extra plugins one case runs with (e.g. a ``RecordedToolsPlugin`` of its recording)."""


def _get_session_id() -> str:
    return f"{EVAL_SESSION_ID_PREFIX}{uuid.uuid4()}"


def _semaphore(parallelism: int) -> asyncio.Semaphore:
    if parallelism < 1:
        raise ValueError(
            f"`parallelism` must be at least 1, got {parallelism}: it is how many eval cases "
            "run (or are scored) at once."
        )
    return asyncio.Semaphore(parallelism)


async def _as_completed(
    items: Sequence[Awaitable[_T]], parallelism: int
) -> AsyncGenerator[_T, None]:
    """The results of ``items`` as each is done, at most ``parallelism`` running at once."""
    gate = _semaphore(parallelism)

    async def gated(item: Awaitable[_T]) -> _T:
        async with gate:
            return await item

    tasks = [asyncio.ensure_future(gated(item)) for item in items]
    try:
        for task in asyncio.as_completed(tasks):
            yield await task
    finally:
        for task in tasks:
            task.cancel()


def _with_rubrics(invocation: Invocation, rubrics: list[Rubric] | None) -> None:
    """Adds ``rubrics`` to the invocation's; ValueError on a rubric id given twice."""
    if not rubrics:
        return
    present = invocation.rubrics if invocation.rubrics is not None else []
    invocation.rubrics = present
    seen = {rubric.rubric_id for rubric in present}
    for rubric in rubrics:
        if rubric.rubric_id in seen:
            raise ValueError(
                f"Rubric id `{rubric.rubric_id}` is given twice for one invocation (on the case "
                "and on the invocation, or twice in one list); rubric ids must be unique."
            )
        present.append(rubric)
        seen.add(rubric.rubric_id)


def _final_status(results: Sequence[EvalMetricResult]) -> EvalStatus:
    """FAILED if any metric failed, PASSED if any passed (and none failed), else NOT_EVALUATED.

    Informational metrics (the efficiency ones) never decide a case."""
    status = EvalStatus.NOT_EVALUATED
    for result in results:
        if result.eval_status == EvalStatus.FAILED:
            return EvalStatus.FAILED
        if result.eval_status == EvalStatus.PASSED:
            status = EvalStatus.PASSED
    return status


def _metric_result(
    metric: EvalMetric, result: EvaluationResult | PerInvocationResult
) -> EvalMetricResult:
    if isinstance(result, EvaluationResult):
        score, status = result.overall_score, result.overall_eval_status
        details = EvalMetricResultDetails(
            rubric_scores=result.overall_rubric_scores,
            token_usage_details=result.overall_token_usage_details,
            duration_details=result.overall_duration_details,
        )
    else:
        score, status = result.score, result.eval_status
        details = EvalMetricResultDetails(
            rubric_scores=result.rubric_scores,
            token_usage_details=result.token_usage_details,
            duration_details=result.duration_details,
        )
    return EvalMetricResult(score=score, eval_status=status, details=details, **metric.model_dump())


class LocalEvalService(BaseEvalService):
    """Runs eval cases on an agent in this process and scores them."""

    def __init__(
        self,
        root_agent: BaseAgent,
        eval_sets_manager: EvalSetsManager,
        metric_evaluator_registry: MetricEvaluatorRegistry | None = None,
        session_service: BaseSessionService | None = None,
        artifact_service: BaseArtifactService | None = None,
        eval_set_results_manager: EvalSetResultsManager | None = None,
        session_id_supplier: Callable[[], str] = _get_session_id,
        user_simulator_provider: UserSimulatorProvider | None = None,
        memory_service: BaseMemoryService | None = None,
        *,
        app: App | None = None,
        plugins_for_case: PluginsForCase | None = None,
    ) -> None:
        """``app``, when given, wraps ``root_agent``: its plugins and configuration take part
        in the runs. ``plugins_for_case`` (cairn) adds plugins to each case's run.

        ``session_service`` is where the cases' sessions are kept; cases of one user there
        share that user's ``user:`` state (and the app's ``app:`` state), as they would in
        production. Without one, each case runs in an in-memory store of its own."""
        self._root_agent = root_agent
        self._app = app
        self._eval_sets_manager = eval_sets_manager
        self._metric_evaluator_registry = (
            metric_evaluator_registry or DEFAULT_METRIC_EVALUATOR_REGISTRY
        )
        self._session_service = session_service
        # Without a store of the caller's, each case gets an in-memory store of its own, so
        # that cases running at once never see each other's user: and app: state.
        self._case_stores: dict[str, BaseSessionService] = {}
        self._artifact_service = artifact_service or InMemoryArtifactService()
        self._eval_set_results_manager = eval_set_results_manager
        self._session_id_supplier = session_id_supplier
        self._user_simulator_provider = user_simulator_provider or UserSimulatorProvider()
        self._memory_service = memory_service
        self._plugins_for_case = plugins_for_case

    async def perform_inference(
        self, inference_request: InferenceRequest
    ) -> AsyncGenerator[InferenceResult, None]:
        """Runs each chosen case (concurrently, ``inference_config.parallelism`` at once) and
        yields its result as soon as it is done; a case whose run raised is a FAILURE."""
        eval_set = self._eval_sets_manager.get_eval_set(
            app_name=inference_request.app_name, eval_set_id=inference_request.eval_set_id
        )
        if eval_set is None:
            raise NotFoundError(
                f"Eval set {inference_request.eval_set_id!r} not found for app "
                f"{inference_request.app_name!r}."
            )
        cases = eval_set.eval_cases
        if inference_request.eval_case_ids:
            wanted = set(inference_request.eval_case_ids)
            unknown = wanted - {case.eval_id for case in cases}
            if unknown:
                raise NotFoundError(
                    f"Eval set {eval_set.eval_set_id!r} has no case {', '.join(sorted(unknown))}; "
                    f"its cases: {', '.join(case.eval_id for case in cases) or 'none'}."
                )
            cases = [case for case in cases if case.eval_id in wanted]
        runs = [
            self._run_case(inference_request.app_name, eval_set.eval_set_id, case) for case in cases
        ]
        async for result in _as_completed(runs, inference_request.inference_config.parallelism):
            yield result

    async def evaluate(
        self, evaluate_request: EvaluateRequest
    ) -> AsyncGenerator[EvalCaseResult, None]:
        """Scores each inference result and yields the case's result as soon as it is ready;
        with a results manager, each eval set's results are then saved as one EvalSetResult."""
        config = evaluate_request.evaluate_config
        scored = [self._score(result, config) for result in evaluate_request.inference_results]
        by_set: dict[tuple[str, str], list[EvalCaseResult]] = {}
        async for inference, case_result in _as_completed(scored, config.parallelism):
            by_set.setdefault((inference.app_name, inference.eval_set_id), []).append(case_result)
            yield case_result
        if self._eval_set_results_manager is not None:
            for (app_name, eval_set_id), results in by_set.items():
                self._eval_set_results_manager.save_eval_set_result(
                    app_name=app_name, eval_set_id=eval_set_id, eval_case_results=results
                )

    async def _run_case(self, app_name: str, eval_set_id: str, case: EvalCase) -> InferenceResult:
        pinned = case.session_input.session_id if case.session_input else None
        generated = None if pinned else self._session_id_supplier()
        result = InferenceResult(
            app_name=app_name,
            eval_set_id=eval_set_id,
            eval_case_id=case.eval_id,
            session_id=pinned or generated,
        )
        store = self._session_service or InMemorySessionService()
        if result.session_id is not None:
            self._case_stores[result.session_id] = store
        try:
            result.inferences = await EvaluationGenerator._generate_inferences_from_root_agent(
                self._root_agent,
                user_simulator=self._user_simulator_provider.provide(case),
                initial_session=case.session_input,
                session_id=generated,
                session_service=store,
                artifact_service=self._artifact_service,
                memory_service=self._memory_service,
                app=self._app,
                plugins=list(self._plugins_for_case(case)) if self._plugins_for_case else (),
            )
            result.status = InferenceStatus.SUCCESS
        except Exception as error:  # one case's failure must not stop the others
            logger.exception("Eval case %s: the run failed", case.eval_id)
            result.status = InferenceStatus.FAILURE
            result.error_message = f"{type(error).__name__}: {error}"
        return result

    async def _score(
        self, inference: InferenceResult, config: EvaluateConfig
    ) -> tuple[InferenceResult, EvalCaseResult]:
        case = self._eval_sets_manager.get_eval_case(
            app_name=inference.app_name,
            eval_set_id=inference.eval_set_id,
            eval_case_id=inference.eval_case_id,
        )
        if case is None:
            raise NotFoundError(
                f"Eval case {inference.eval_case_id!r} not found in eval set "
                f"{inference.eval_set_id!r} of app {inference.app_name!r}."
            )
        user_id = (
            case.session_input.user_id
            if case.session_input and case.session_input.user_id
            else _DEFAULT_USER_ID
        )
        session = None
        if inference.session_id is not None:
            store = self._case_stores.get(inference.session_id, self._session_service)
            session = (
                None
                if store is None
                else await store.get_session(
                    app_name=self._session_app_name(inference.app_name, case),
                    user_id=user_id,
                    session_id=inference.session_id,
                )
            )
        actual = inference.inferences
        per_invocation: list[EvalMetricResultPerInvocation] = []
        overall: list[EvalMetricResult] = []
        if actual is not None and inference.status != InferenceStatus.FAILURE:
            expected = case.conversation
            if case.conversation_scenario is None and (
                expected is None or len(actual) != len(expected)
            ):
                raise ValueError(
                    f"Eval case {case.eval_id!r}: the agent ran {len(actual)} invocations but "
                    f"the conversation has {len(expected or [])} turns."
                )
            for index, invocation in enumerate(actual):
                _with_rubrics(invocation, case.rubrics)
                if expected:
                    _with_rubrics(invocation, expected[index].rubrics)
                per_invocation.append(
                    EvalMetricResultPerInvocation(
                        actual_invocation=invocation,
                        expected_invocation=expected[index] if expected else None,
                        eval_metric_results=[],
                    )
                )
            for metric in config.eval_metrics:
                await self._score_metric(
                    metric,
                    case,
                    actual,
                    expected,
                    case.conversation_scenario,
                    per_invocation,
                    overall,
                )
            status = _final_status(overall)
            divergence = first_divergence(expected, actual) if expected else None
        else:
            status = EvalStatus.FAILED
            divergence = None
        return inference, EvalCaseResult(
            eval_set_file=inference.eval_set_id,
            eval_set_id=inference.eval_set_id,
            eval_id=inference.eval_case_id,
            final_eval_status=status,
            overall_eval_metric_results=overall,
            eval_metric_result_per_invocation=per_invocation,
            session_id=inference.session_id or "",
            session_details=session,
            user_id=user_id,
            divergence=divergence,
        )

    def _session_app_name(self, app_name: str, case: EvalCase) -> str:
        if self._app is not None:
            return self._app.name
        return case.session_input.app_name if case.session_input else "EvaluationGenerator"

    async def _score_metric(
        self,
        metric: EvalMetric,
        case: EvalCase,
        actual: list[Invocation],
        expected: list[Invocation] | None,
        scenario: ConversationScenario | None,
        per_invocation: list[EvalMetricResultPerInvocation],
        overall: list[EvalMetricResult],
    ) -> None:
        try:
            evaluator = self._metric_evaluator_registry.get_evaluator(eval_metric=metric)
            outcome = evaluator.evaluate_invocations(
                actual_invocations=actual,
                expected_invocations=expected,
                conversation_scenario=scenario,
            )
            result = await outcome if inspect.isawaitable(outcome) else outcome
        except Exception:  # a metric that cannot run leaves the others to run
            logger.exception("Eval case %s: metric %s failed", case.eval_id, metric.metric_name)
            result = EvaluationResult(overall_eval_status=EvalStatus.NOT_EVALUATED)
        overall.append(_metric_result(metric, result))
        aligned = len(result.per_invocation_results) == len(per_invocation)
        if not aligned and result.overall_eval_status not in (
            EvalStatus.NOT_EVALUATED,
            EvalStatus.INFORMATIONAL,
        ):
            raise ValueError(
                f"Metric {metric.metric_name!r} returned {len(result.per_invocation_results)} "
                f"per-invocation results for {len(per_invocation)} invocations; an evaluator "
                "must return one result per invocation."
            )
        for index, slot in enumerate(per_invocation):
            each = (
                result.per_invocation_results[index]
                if aligned
                else PerInvocationResult(actual_invocation=slot.actual_invocation)
            )
            slot.eval_metric_results.append(_metric_result(metric, each))
