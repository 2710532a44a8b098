"""``cairn eval``: run eval sets on an agent (ADK's ``adk eval``), and make eval cases.

``cairn eval AGENT_DIR EVALSET...`` runs the cases; ``cairn eval create ...`` makes a case
from a stored session. The first word picks: a subcommand's name, else an agent folder.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from cairn.cli._errors import EXIT_ERROR, CommandError, NotFoundError
from cairn.cli._loading import load_target
from cairn.cli.eval_create import create as create_from_session
from cairn.errors import CairnError
from cairn.evaluation.base_eval_service import (
    EvaluateConfig,
    EvaluateRequest,
    InferenceConfig,
    InferenceRequest,
    InferenceResult,
)
from cairn.evaluation.eval_config import (
    EvalConfig,
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)
from cairn.evaluation.eval_result import EvalCaseResult
from cairn.evaluation.eval_sets_manager import EvalSetsManager
from cairn.evaluation.evaluator import EvalStatus
from cairn.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from cairn.evaluation.local_eval_service import LocalEvalService
from cairn.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager
from cairn.evaluation.local_eval_sets_manager import LocalEvalSetsManager, load_eval_set_from_file
from cairn.evaluation.metric_evaluator_registry import register_custom_metrics_from_config
from cairn.evaluation.recorded_tools import recorded_tools_for
from cairn.evaluation.simulation.user_simulator_provider import UserSimulatorProvider
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.factory import session_service_from_url

_EXIT_FAILED = 1
"""A case failed a criterion (or its run failed), or no case ran."""


class _EvalGroup(click.Group):
    """A group whose default command is ``run``: ``cairn eval AGENT_DIR ...`` runs evals."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group("eval", cls=_EvalGroup, context_settings={"help_option_names": ["-h", "--help"]})
def eval_group() -> None:
    """Evaluate an agent on eval sets (ADK's *.evalset.json and *.test.json files).

    \b
    cairn eval AGENT_DIR EVALSET... [--config FILE] [--print-detailed-results]
                [--store URL] [--parallelism N] [--reuse-tool-results]
    (every option: cairn eval run --help)

    \b
    Examples:
      cairn eval my_agent my_agent/basic.evalset.json
      cairn eval my_agent basic.evalset.json:case_1,case_2 --print-detailed-results
      cairn eval my_agent my_agent/basic.evalset.json --store .cairn/eval.db
      cairn eval create my_agent my_agent/regressions.evalset.json --from-session ID

    \b
    Exit codes:
      0  every case passed every criterion
      1  a case failed (or its run raised), no case ran, or a named file is missing
      2  refused: a malformed eval set or config, or bad options
    """


def _parse_targets(items: Sequence[str]) -> dict[str, list[str]]:
    """``set[:case,case]`` items -> eval set (file or id) -> case ids (empty: all)."""
    targets: dict[str, list[str]] = {}
    for item in items:
        name, _, cases = item.partition(":")
        targets.setdefault(name, []).extend(c.strip() for c in cases.split(",") if c.strip())
    return targets


def _config_path(given: str | None, targets: dict[str, list[str]]) -> str | None:
    """The config given, else the ``test_config.json`` beside a single eval set file."""
    if given:
        if not os.path.isfile(given):
            raise NotFoundError(f"no eval config file {given}")
        return given
    if len(targets) == 1:
        only = next(iter(targets))
        if os.path.isfile(only):
            return os.path.join(os.path.dirname(only) or ".", "test_config.json")
    return None


@eval_group.command("run", hidden=True)
@click.argument(
    "agent_dir", type=click.Path(exists=True, file_okay=False, resolve_path=True, path_type=Path)
)
@click.argument("eval_sets", nargs=-1, required=True, metavar="EVALSET...")
@click.option(
    "--config",
    "--config_file_path",
    "config_file",
    default=None,
    metavar="FILE",
    help="The eval config (criteria, user simulator). Default: test_config.json beside a "
    "single eval set file, else tool_trajectory_avg_score 1.0 and response_match_score 0.8.",
)
@click.option(
    "--print-detailed-results",
    "--print_detailed_results",
    "detailed",
    is_flag=True,
    help="Print every case's metrics per invocation.",
)
@click.option(
    "--store",
    default=None,
    metavar="URL",
    help="The session store the cases run in (default: in memory). A SQLite path or a "
    "database URL keeps each case's session for `cairn sessions show` and `cairn web`, and "
    "the results beside them (StoreEvalSetResultsManager).",
)
@click.option(
    "--parallelism",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="How many cases run at once, each on its own session.",
)
@click.option(
    "--reuse-tool-results",
    is_flag=True,
    help="Answer tool calls from each case's recorded trajectory while the agent still "
    "follows it (a regression suite with no live tools); live tools run from the first call "
    "that differs.",
)
@click.option(
    "--log-level",
    "--log_level",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    default="WARNING",
    show_default=True,
)
def run(
    agent_dir: Path,
    eval_sets: tuple[str, ...],
    config_file: str | None,
    detailed: bool,
    store: str | None,
    parallelism: int,
    reuse_tool_results: bool,
    log_level: str,
) -> None:
    """Run the cases of each EVALSET (a file, or an eval set id saved under AGENT_DIR) on
    the agent of AGENT_DIR; FILE:case_1,case_2 runs only those cases. `cairn eval AGENT_DIR
    ...` is the same command.

    Cases run concurrently, each on a new session. Results are written as ADK writes them,
    to AGENT_DIR/.adk/eval_history/.

    \b
    Examples:
      cairn eval my_agent my_agent/basic.evalset.json
      cairn eval my_agent basic.evalset.json:case_1 --print-detailed-results
      cairn eval my_agent regressions.evalset.json --reuse-tool-results --store eval.db

    \b
    Exit codes:
      0  every case passed every criterion
      1  a case failed (or its run raised), no case ran, or a named file is missing
      2  refused: a malformed eval set or config, or bad options
    """
    logging.basicConfig(level=getattr(logging, log_level.upper()))
    console = Console(stderr=True)
    try:
        results = asyncio.run(
            _run(
                agent_dir,
                _parse_targets(eval_sets),
                config_file,
                store,
                parallelism,
                reuse_tool_results,
                console,
            )
        )
    except CommandError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(error.exit_code)
    except (CairnError, ValueError) as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_ERROR)
    out = Console()
    _print_table(out, results)
    if detailed:
        for result in results:
            _print_details(out, result)
    failed = sum(1 for r in results if r.final_eval_status != EvalStatus.PASSED)
    sys.exit(_EXIT_FAILED if failed or not results else 0)


async def _run(
    agent_dir: Path,
    targets: dict[str, list[str]],
    config_file: str | None,
    store: str | None,
    parallelism: int,
    reuse_tool_results: bool,
    console: Console,
) -> list[EvalCaseResult]:
    target = load_target(agent_dir)
    app_name = agent_dir.name
    agents_dir = str(agent_dir.parent)
    config = get_evaluation_criteria_or_default(_config_path(config_file, targets))
    sets, requests = _requests(targets, app_name, agents_dir, parallelism)
    # Without --store each case runs in an in-memory store of its own (no shared user state).
    sessions: BaseSessionService | None = None if store is None else session_service_from_url(store)
    service = LocalEvalService(
        root_agent=target.agent,
        eval_sets_manager=sets,
        metric_evaluator_registry=register_custom_metrics_from_config(config),
        session_service=sessions,
        eval_set_results_manager=LocalEvalSetResultsManager(agents_dir=agents_dir),
        user_simulator_provider=UserSimulatorProvider(
            user_simulator_config=config.user_simulator_config
        ),
        app=target.app,
        plugins_for_case=recorded_tools_for if reuse_tool_results else None,
    )
    try:
        results = await _execute(service, sets, requests, config, parallelism, console)
        if sessions is not None:
            await _keep_in_store(sessions, app_name, results, console)
        return results
    finally:
        if sessions is not None:
            await sessions.close()


async def _keep_in_store(
    sessions: BaseSessionService, app_name: str, results: list[EvalCaseResult], console: Console
) -> None:
    """Each eval set's results, also as an artifact in the store (beside the sessions)."""
    from cairn.artifacts.session_store_artifact_service import SessionStoreArtifactService
    from cairn.evaluation.store_eval_set_results_manager import StoreEvalSetResultsManager

    keeper = StoreEvalSetResultsManager(SessionStoreArtifactService(sessions))
    by_set: dict[str, list[EvalCaseResult]] = {}
    for result in results:
        by_set.setdefault(result.eval_set_id, []).append(result)
    for eval_set_id, cases in by_set.items():
        kept = await keeper.save_eval_set_result(app_name, eval_set_id, cases)
        console.print(f"results kept in the store as {kept.eval_set_result_id}")


def _requests(
    targets: dict[str, list[str]], app_name: str, agents_dir: str, parallelism: int
) -> tuple[InMemoryEvalSetsManager | LocalEvalSetsManager, list[InferenceRequest]]:
    config = InferenceConfig(parallelism=parallelism)
    files = [name for name in targets if os.path.isfile(name)]
    for name in targets:
        if name not in files and (os.sep in name or name.endswith(".json")):
            raise NotFoundError(f"no eval set file {name}")
    if files and len(files) != len(targets):
        missing = ", ".join(name for name in targets if name not in files)
        raise NotFoundError(
            f"no eval set file {missing} (give eval set files, or eval set ids saved under "
            f"{agents_dir}/{app_name}, not both)"
        )
    if not files:
        saved = LocalEvalSetsManager(agents_dir=agents_dir)
        for eval_set_id in targets:
            if saved.get_eval_set(app_name, eval_set_id) is None:
                raise NotFoundError(
                    f"no eval set file or saved eval set {eval_set_id!r} (saved sets live in "
                    f"{agents_dir}/{app_name}/<id>.evalset.json)"
                )
        return saved, [
            InferenceRequest(
                app_name=app_name, eval_set_id=i, eval_case_ids=ids, inference_config=config
            )
            for i, ids in targets.items()
        ]
    in_memory = InMemoryEvalSetsManager()
    requests = []
    for path, case_ids in targets.items():
        eval_set = load_eval_set_from_file(path, path)
        in_memory.create_eval_set(app_name=app_name, eval_set_id=eval_set.eval_set_id)
        for case in eval_set.eval_cases:
            in_memory.add_eval_case(
                app_name=app_name, eval_set_id=eval_set.eval_set_id, eval_case=case
            )
        requests.append(
            InferenceRequest(
                app_name=app_name,
                eval_set_id=eval_set.eval_set_id,
                eval_case_ids=case_ids,
                inference_config=config,
            )
        )
    return in_memory, requests


async def _execute(
    service: LocalEvalService,
    service_sets: EvalSetsManager,
    requests: list[InferenceRequest],
    config: EvalConfig,
    parallelism: int,
    console: Console,
) -> list[EvalCaseResult]:
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )
    inferences: list[InferenceResult] = []
    with progress:
        running = progress.add_task("running cases", total=None)
        for request in requests:
            async for inference in service.perform_inference(request):
                inferences.append(inference)
                progress.advance(running)
        scoring = progress.add_task("scoring", total=len(inferences))
        results = []
        evaluate = EvaluateRequest(
            inference_results=inferences,
            evaluate_config=EvaluateConfig(
                eval_metrics=get_eval_metrics_from_config(config), parallelism=parallelism
            ),
        )
        async for result in service.evaluate(evaluate):
            results.append(result)
            progress.advance(scoring)
    for inference in inferences:
        if inference.error_message:
            console.print(
                f"[red]{inference.eval_case_id}[/]: the run failed: {inference.error_message}"
            )
    # Cases finish in any order; they are reported in the order of the eval sets.
    order: dict[tuple[str, str], int] = {}
    for request in requests:
        eval_set = service_sets.get_eval_set(request.app_name, request.eval_set_id)
        for case in eval_set.eval_cases if eval_set else []:
            order.setdefault((request.eval_set_id, case.eval_id), len(order))
    results.sort(key=lambda r: order.get((r.eval_set_id, r.eval_id), len(order)))
    return results


def _gating(result: EvalCaseResult) -> list[Any]:
    return [
        m for m in result.overall_eval_metric_results if m.eval_status != EvalStatus.INFORMATIONAL
    ]


def _print_table(console: Console, results: list[EvalCaseResult]) -> None:
    metrics: list[str] = []
    for result in results:
        for metric in _gating(result):
            if metric.metric_name not in metrics:
                metrics.append(metric.metric_name)
    table = Table(title="Eval results")
    table.add_column("eval set")
    table.add_column("case")
    table.add_column("status")
    for name in metrics:
        table.add_column(name, justify="right")
    diverged = any(r.divergence is not None for r in results)
    if diverged:
        table.add_column("first divergence from the case", overflow="fold")
    for result in results:
        scores = {m.metric_name: m for m in _gating(result)}
        table.add_row(
            result.eval_set_id,
            result.eval_id,
            _status(result.final_eval_status),
            *(_score(scores.get(name)) for name in metrics),
            *([result.divergence.describe() if result.divergence else ""] if diverged else []),
        )
    console.print(table)
    passed = sum(1 for r in results if r.final_eval_status == EvalStatus.PASSED)
    console.print(f"{passed} of {len(results)} cases passed")


def _status(status: EvalStatus) -> str:
    colour = {EvalStatus.PASSED: "green", EvalStatus.FAILED: "red"}.get(status, "yellow")
    return f"[{colour}]{status.name}[/]"


def _score(metric: Any) -> str:
    if metric is None:
        return ""
    if metric.score is None:
        return "n/a"
    threshold = metric.criterion.threshold if metric.criterion else metric.threshold
    mark = "" if threshold is None else f" / {threshold:g}"
    return f"{metric.score:.3g}{mark}"


def _print_details(console: Console, result: EvalCaseResult) -> None:
    console.rule(f"{result.eval_set_id} / {result.eval_id}: {result.final_eval_status.name}")
    if result.divergence is not None:
        console.print(f"First divergence: {result.divergence.describe()}")
    for metric in result.overall_eval_metric_results:
        threshold = metric.criterion.threshold if metric.criterion else metric.threshold
        console.print(
            f"Metric: {metric.metric_name}, Status: {metric.eval_status.name}, "
            f"Score: {metric.score}, Threshold: {threshold}"
        )
        for rubric in (metric.details.rubric_scores or []) if metric.details else []:
            console.print(f"  rubric {rubric.rubric_id}: {rubric.score} ({rubric.rationale})")
    table = Table(show_lines=True)
    for column in ("#", "prompt", "expected response", "actual response", "metrics"):
        table.add_column(column, overflow="fold", max_width=40)
    for index, per in enumerate(result.eval_metric_result_per_invocation, start=1):
        expected = per.expected_invocation
        table.add_row(
            str(index),
            _text(per.actual_invocation.user_content),
            _text(expected.final_response) if expected else "",
            _text(per.actual_invocation.final_response),
            "\n".join(
                f"{m.metric_name}: {m.score} {m.eval_status.name}" for m in per.eval_metric_results
            ),
        )
    console.print(table)


def _text(content: Any) -> str:
    parts = getattr(content, "parts", None) or []
    texts = [part.text for part in parts if getattr(part, "text", None)]
    if texts:
        return "\n".join(texts)
    calls = [part.function_response.name for part in parts if part.function_response]
    return f"(answers {', '.join(calls)})" if calls else ""


eval_group.add_command(create_from_session)

__all__ = ["eval_group"]
