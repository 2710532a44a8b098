"""``AgentEvaluator``: eval sets as assertions in a test suite (ADK's pytest helper).

``await AgentEvaluator.evaluate("my_agent", "tests/my_agent.test.json")`` runs the agent on
each case and raises ``AssertionError`` listing every metric that did not reach its
threshold, so a pytest test fails with the reasons.
"""

from __future__ import annotations

import csv
import importlib
import json
import logging
import os
import statistics
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple, cast

from google.genai import types as genai_types
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from cairn.agents.base_agent import BaseAgent
from cairn.apps.app import App
from cairn.artifacts.base_artifact_service import BaseArtifactService

from ._legacy_eval_files import convert_turns
from .base_eval_service import EvaluateConfig, EvaluateRequest, InferenceConfig, InferenceRequest
from .eval_case import IntermediateDataType, Invocation, get_all_tool_calls
from .eval_config import (
    EvalConfig,
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)
from .eval_metrics import BaseCriterion, EvalMetricResult, _get_metric_threshold
from .eval_result import EvalCaseResult
from .eval_set import EvalSet
from .eval_set_results_manager import EvalSetResultsManager
from .evaluator import EvalStatus
from .in_memory_eval_sets_manager import InMemoryEvalSetsManager
from .local_eval_service import LocalEvalService
from .local_eval_sets_manager import load_test_file
from .metric_evaluator_registry import (
    DEFAULT_METRIC_EVALUATOR_REGISTRY,
    register_custom_metrics_from_config,
)
from .simulation.user_simulator_provider import UserSimulatorProvider

logger = logging.getLogger(__name__)

NUM_RUNS = 2
"""How many times each case runs by default (ADK's default), to smooth out model variance."""

_TEST_CONFIG = "test_config.json"


def load_json(file_path: str) -> dict[str, Any] | list[Any]:
    """The JSON document in the file."""
    with open(file_path, encoding="utf-8") as file:
        return cast(dict[str, Any] | list[Any], json.load(file))


class _Scored(NamedTuple):
    actual: Invocation
    expected: Invocation | None
    result: EvalMetricResult


def _text(content: genai_types.Content | None) -> str:
    if content and content.parts:
        return "\n".join(part.text for part in content.parts if part.text)
    return ""


def _calls_text(data: IntermediateDataType | None) -> str:
    return "\n".join(
        f"{call.name}({', '.join(f'{k}={v!r}' for k, v in (call.args or {}).items())})"
        for call in get_all_tool_calls(data)
    )


class AgentEvaluator:
    """Runs eval sets on an agent and asserts that every criterion passes."""

    @staticmethod
    def find_config_for_test_file(test_file: str) -> EvalConfig:
        """The ``test_config.json`` beside ``test_file``, or the default criteria."""
        return get_evaluation_criteria_or_default(
            os.path.join(os.path.dirname(test_file), _TEST_CONFIG)
        )

    @staticmethod
    async def evaluate_eval_set(
        agent_module: str,
        eval_set: EvalSet,
        criteria: dict[str, float] | None = None,
        eval_config: EvalConfig | None = None,
        num_runs: int = NUM_RUNS,
        agent_name: str | None = None,
        print_detailed_results: bool = True,
        artifact_service: BaseArtifactService | None = None,
        output_file: str | None = None,
        app_name: str | None = None,
        eval_set_results_manager: EvalSetResultsManager | None = None,
    ) -> None:
        """Runs each case ``num_runs`` times on the module's agent and asserts that every
        metric of ``eval_config`` (mean over runs and invocations) reaches its threshold.

        ``criteria`` (metric name -> threshold) is the older spelling of ``eval_config``.
        ``output_file`` receives one CSV row per invocation and metric. With
        ``eval_set_results_manager`` (and ``app_name``) the results are saved too.
        """
        if num_runs < 1:
            raise ValueError(f"`num_runs` must be at least 1, got {num_runs}.")
        if eval_set_results_manager is not None and not app_name:
            raise ValueError("`app_name` is required with an `eval_set_results_manager`.")
        if not eval_set or not eval_set.eval_cases:
            raise ValueError(
                "The eval set has no cases, so there is nothing to pass or fail; add cases to "
                "it (each an `eval_id` with a `conversation`)."
            )
        if criteria:
            logger.warning("`criteria` is deprecated: pass `eval_config=EvalConfig(...)`.")
            eval_config = EvalConfig(
                criteria={name: BaseCriterion(threshold=value) for name, value in criteria.items()}
            )
        if eval_config is None:
            raise ValueError("`eval_config` is required (or the older `criteria`).")
        agent, app = await AgentEvaluator._get_agent_for_eval(agent_module, agent_name)
        app_name = app_name or "test_app"
        registry = register_custom_metrics_from_config(
            eval_config, DEFAULT_METRIC_EVALUATOR_REGISTRY.fork()
        )
        sets = InMemoryEvalSetsManager()
        sets.create_eval_set(app_name=app_name, eval_set_id=eval_set.eval_set_id)
        for case in eval_set.eval_cases:
            sets.add_eval_case(app_name=app_name, eval_set_id=eval_set.eval_set_id, eval_case=case)
        service = LocalEvalService(
            root_agent=agent,
            eval_sets_manager=sets,
            metric_evaluator_registry=registry,
            artifact_service=artifact_service,
            eval_set_results_manager=eval_set_results_manager,
            user_simulator_provider=UserSimulatorProvider(
                user_simulator_config=eval_config.user_simulator_config
            ),
            app=app,
        )
        inferences = []
        for _ in range(num_runs):
            request = InferenceRequest(
                app_name=app_name,
                eval_set_id=eval_set.eval_set_id,
                inference_config=InferenceConfig(),
            )
            inferences.extend([result async for result in service.perform_inference(request)])
        by_case: dict[str, list[EvalCaseResult]] = {}
        evaluate = EvaluateRequest(
            inference_results=inferences,
            evaluate_config=EvaluateConfig(eval_metrics=get_eval_metrics_from_config(eval_config)),
        )
        async for case_result in service.evaluate(evaluate):
            by_case.setdefault(case_result.eval_id, []).append(case_result)

        failures: list[str] = []
        rows: list[dict[str, Any]] = []
        for eval_id in (case.eval_id for case in eval_set.eval_cases):
            results = by_case.get(eval_id, [])
            by_metric = AgentEvaluator._by_metric(results)
            failures.extend(
                AgentEvaluator._metric_failures(by_metric, print_detailed_results, agent_module)
            )
            failures.extend(AgentEvaluator._run_failures(eval_id, results, agent_module))
            if output_file:
                rows.extend(AgentEvaluator._rows(eval_set.eval_set_id, eval_id, by_metric))
        if output_file:
            AgentEvaluator._write_csv(rows, output_file)
        message = "Following are all the test failures."
        if not print_detailed_results:
            message += " Re-run with `print_detailed_results=True` for each invocation's details."
        assert not failures, message + "\n" + "\n".join(failures)

    @staticmethod
    async def evaluate(
        agent_module: str,
        eval_dataset_file_path_or_dir: str,
        num_runs: int = NUM_RUNS,
        agent_name: str | None = None,
        initial_session_file: str | None = None,
        print_detailed_results: bool = True,
        artifact_service: BaseArtifactService | None = None,
        output_file: str | None = None,
        app_name: str | None = None,
        eval_set_results_manager: EvalSetResultsManager | None = None,
    ) -> None:
        """Evaluates the agent on an eval file, or on every ``*.test.json`` under a folder,
        each with the ``test_config.json`` beside it (or the default criteria)."""
        if num_runs < 1:
            raise ValueError(f"`num_runs` must be at least 1, got {num_runs}.")
        target = eval_dataset_file_path_or_dir
        if os.path.isdir(target):
            files = sorted(
                os.path.join(root, name)
                for root, _, names in os.walk(target)
                for name in names
                if name.endswith(".test.json")
            )
        else:
            files = [target]
        if not files:
            raise ValueError(
                f"No `*.test.json` eval files under {target}, so there is nothing to evaluate."
            )
        initial_session = AgentEvaluator._get_initial_session(initial_session_file)
        for test_file in files:
            config = AgentEvaluator.find_config_for_test_file(test_file)
            await AgentEvaluator.evaluate_eval_set(
                agent_module=agent_module,
                eval_set=AgentEvaluator._load_eval_set_from_file(
                    test_file, config, initial_session
                ),
                eval_config=config,
                num_runs=num_runs,
                agent_name=agent_name,
                print_detailed_results=print_detailed_results,
                artifact_service=artifact_service,
                output_file=output_file,
                app_name=app_name,
                eval_set_results_manager=eval_set_results_manager,
            )

    @staticmethod
    def migrate_eval_data_to_new_schema(
        old_eval_data_file: str,
        new_eval_data_file: str,
        initial_session_file: str | None = None,
    ) -> None:
        """Writes the cases of an older ``*.test.json`` (a list of turns) as an EvalSet."""
        if not old_eval_data_file or not new_eval_data_file:
            raise ValueError("Give both old_eval_data_file and new_eval_data_file.")
        data = load_json(old_eval_data_file)
        if not isinstance(data, list):
            raise ValueError(
                f"{old_eval_data_file} is not in the older format (a list of turns); it needs "
                "no migration."
            )
        eval_set = convert_turns(
            old_eval_data_file,
            data,
            AgentEvaluator._get_initial_session(initial_session_file),
            eval_set_id=str(uuid.uuid4()),
        )
        with open(new_eval_data_file, "w", encoding="utf-8") as file:
            file.write(eval_set.model_dump_json(indent=2, exclude_none=True))

    @staticmethod
    def _load_eval_set_from_file(
        eval_set_file: str, eval_config: EvalConfig, initial_session: dict[str, Any]
    ) -> EvalSet:
        del eval_config  # the criteria are checked when the metrics run
        try:
            return load_test_file(eval_set_file, initial_session or None)
        except ValidationError as error:  # pragma: no cover - load_test_file raises typed
            raise ValueError(f"{eval_set_file}: {error}") from error

    @staticmethod
    def _get_initial_session(initial_session_file: str | None = None) -> dict[str, Any]:
        if not initial_session_file:
            return {}
        data = load_json(initial_session_file)
        if not isinstance(data, dict):
            raise ValueError(
                f"{initial_session_file} must hold a JSON object (app_name, user_id, state)."
            )
        return data

    @staticmethod
    async def _get_agent_for_eval(
        module_name: str, agent_name: str | None = None
    ) -> tuple[BaseAgent, App | None]:
        """The agent to evaluate (the root agent, or its sub-agent ``agent_name``) and the
        module's App if it defines one. The module (or its ``agent`` submodule) defines
        ``root_agent``, ``app``, or an async ``get_agent_async()`` returning (agent, closer)."""
        module = importlib.import_module(module_name)
        holder = getattr(module, "agent", module)
        app = getattr(holder, "app", None)
        if not isinstance(app, App):
            app = None
        root: Any = app.root_agent if app is not None else getattr(holder, "root_agent", None)
        if root is None:
            factory = getattr(holder, "get_agent_async", None)
            if not callable(factory):
                raise ValueError(
                    f"Module {module_name} defines no `root_agent`, `app` or "
                    "`get_agent_async`; define one of them at module level."
                )
            root, _ = await cast(Callable[[], Awaitable[tuple[Any, Any]]], factory)()
        if not isinstance(root, BaseAgent):
            raise ValueError(f"{module_name}: root_agent is a {type(root).__name__}, not an agent.")
        if agent_name:
            chosen = root.find_agent(agent_name)
            if chosen is None:
                raise ValueError(f"Sub-agent {agent_name!r} not found under {root.name!r}.")
            return chosen, app
        return root, app

    @staticmethod
    def _by_metric(results: list[EvalCaseResult]) -> dict[str, list[_Scored]]:
        by_metric: dict[str, list[_Scored]] = {}
        for case_result in results:
            for per_invocation in case_result.eval_metric_result_per_invocation:
                for metric_result in per_invocation.eval_metric_results:
                    by_metric.setdefault(metric_result.metric_name, []).append(
                        _Scored(
                            per_invocation.actual_invocation,
                            per_invocation.expected_invocation,
                            metric_result,
                        )
                    )
        return by_metric

    @staticmethod
    def _metric_failures(
        by_metric: dict[str, list[_Scored]], print_details: bool, agent_module: str
    ) -> list[str]:
        """A line per gating metric whose mean score misses its threshold (or has none)."""
        failures = []
        for name, scored in by_metric.items():
            first = scored[0].result
            scores = [s.result.score for s in scored if s.result.score is not None]
            mean = statistics.mean(scores) if scores else None
            informational = first.eval_status == EvalStatus.INFORMATIONAL or (
                first.criterion is None and first.threshold is None
            )
            if informational:
                if print_details:
                    AgentEvaluator._print_details(
                        scored, EvalStatus.INFORMATIONAL, mean, name, None
                    )
                continue
            threshold = _get_metric_threshold(first)
            higher_is_better = AgentEvaluator._higher_is_better(scored, threshold)
            if mean is None:
                status = EvalStatus.NOT_EVALUATED
                failures.append(
                    f"{name} for {agent_module} was not evaluated: no score was produced, so the "
                    f"threshold {threshold} was never checked (see the log for why)."
                )
            elif (mean >= threshold) if higher_is_better else (mean <= threshold):
                status = EvalStatus.PASSED
            else:
                status = EvalStatus.FAILED
                failures.append(
                    f"{name} for {agent_module} Failed. Expected {threshold}, but got {mean}."
                )
            if print_details:
                AgentEvaluator._print_details(scored, status, mean, name, threshold)
        return failures

    @staticmethod
    def _higher_is_better(scored: list[_Scored], threshold: float) -> bool:
        """Whether passing means at or above the threshold, as the metric's own verdicts
        show (a metric like token usage passes below it); above when they do not tell."""
        seen = {
            (s.result.score > threshold) == (s.result.eval_status == EvalStatus.PASSED)
            for s in scored
            if s.result.score is not None
            and s.result.score != threshold
            and s.result.eval_status in (EvalStatus.PASSED, EvalStatus.FAILED)
        }
        return seen.pop() if len(seen) == 1 else True

    @staticmethod
    def _run_failures(eval_id: str, results: list[EvalCaseResult], agent_module: str) -> list[str]:
        failed = sum(
            1
            for result in results
            if result.final_eval_status == EvalStatus.FAILED
            and not any(r.eval_metric_results for r in result.eval_metric_result_per_invocation)
        )
        if not failed:
            return []
        return [
            f"{eval_id} for {agent_module} Failed. {failed} of {len(results)} runs failed "
            "without producing any metric result (the agent's run raised; see the log)."
        ]

    @staticmethod
    def _print_details(
        scored: list[_Scored],
        status: EvalStatus,
        score: float | None,
        metric_name: str,
        threshold: float | None,
    ) -> None:
        console = Console()
        console.print(
            f"Summary: `{status}` for Metric: `{metric_name}`. Expected threshold: "
            f"`{threshold}`, actual value: `{score}`."
        )
        table = Table(show_lines=True)
        for column in (
            "eval_status",
            "score",
            "threshold",
            "prompt",
            "expected_response",
            "actual_response",
            "expected_tool_calls",
            "actual_tool_calls",
        ):
            table.add_column(column, max_width=25, overflow="fold")
        for item in scored:
            expected = item.expected
            table.add_row(
                str(item.result.eval_status),
                str(item.result.score),
                str(threshold),
                _text((expected or item.actual).user_content),
                _text(expected.final_response if expected else None),
                _text(item.actual.final_response),
                _calls_text(expected.intermediate_data if expected else None),
                _calls_text(item.actual.intermediate_data),
            )
        console.print(table)
        console.print()

    @staticmethod
    def _rows(
        eval_set_id: str, eval_id: str, by_metric: dict[str, list[_Scored]]
    ) -> list[dict[str, Any]]:
        return [
            {
                "eval_set_id": eval_set_id,
                "eval_id": eval_id,
                "metric_name": name,
                "eval_status": item.result.eval_status.name,
                "score": item.result.score,
                "threshold": item.result.criterion.threshold
                if item.result.criterion
                else item.result.threshold,
                "prompt": _text(item.actual.user_content),
                "expected_response": _text(item.expected.final_response if item.expected else None),
                "actual_response": _text(item.actual.final_response),
                "expected_tool_calls": _calls_text(
                    item.expected.intermediate_data if item.expected else None
                ),
                "actual_tool_calls": _calls_text(item.actual.intermediate_data),
            }
            for name, scored in by_metric.items()
            for item in scored
        ]

    @staticmethod
    def _write_csv(rows: list[dict[str, Any]], output_file: str) -> None:
        directory = os.path.dirname(output_file)
        if directory:
            os.makedirs(directory, exist_ok=True)
        exists = os.path.exists(output_file) and os.path.getsize(output_file) > 0
        with open(output_file, "a", newline="", encoding="utf-8") as file:
            fields = list(rows[0]) if rows else ["eval_set_id", "eval_id", "metric_name"]
            writer = csv.DictWriter(file, fieldnames=fields)
            if not exists:
                writer.writeheader()
            writer.writerows(rows)
