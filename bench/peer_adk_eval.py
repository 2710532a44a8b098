"""google-adk side of bench/eval_throughput.py: an eval set through ADK's LocalEvalService.

Runs inside bench/.peers/adk-eval (google-adk[eval]==2.13.0, made by bench/eval_throughput.py),
never in the project's venv, and imports no cairn:

    python bench/peer_adk_eval.py --agent DIR --evalset FILE --config FILE --results-dir DIR
                                  --parallelism 1,4 [--warmup 5] [--repeat 3]

The agent is loaded as `adk eval` loads it (cli_eval.get_app_or_root_agent). Per parallelism
it builds a LocalEvalService as `adk eval` does (an InMemoryEvalSetsManager holding the set,
a LocalEvalSetResultsManager writing under --results-dir, the config's metrics and user
simulator), then times perform_inference over every case followed by evaluate, both with that
parallelism, --repeat times (a new service each time; the median is printed, and the fewest
cases passed). --warmup cases run once first, untimed, on a service of their own.

Prints one machine-readable line per parallelism:
    RESULT peer=adk parallelism=<n> cases=<n> passed=<n> seconds=<s>
    FAILED peer=adk reason=<one line>
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore")

from google.adk.cli.cli_eval import get_app_or_root_agent  # noqa: E402
from google.adk.evaluation.base_eval_service import (  # noqa: E402
    EvaluateConfig,
    EvaluateRequest,
    InferenceConfig,
    InferenceRequest,
)
from google.adk.evaluation.eval_config import (  # noqa: E402
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)
from google.adk.evaluation.evaluator import EvalStatus  # noqa: E402
from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager  # noqa: E402
from google.adk.evaluation.local_eval_service import LocalEvalService  # noqa: E402
from google.adk.evaluation.local_eval_set_results_manager import (  # noqa: E402
    LocalEvalSetResultsManager,
)
from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file  # noqa: E402
from google.adk.evaluation.metric_evaluator_registry import (  # noqa: E402
    register_custom_metrics_from_config,
)
from google.adk.evaluation.simulation.user_simulator_provider import (  # noqa: E402
    UserSimulatorProvider,
)


async def run_set(
    agent: Any, app: Any, app_name: str, eval_set: Any, config: Any, results_dir: str, n: int
) -> tuple[int, int, float]:
    """(cases, passed, seconds) of one inference + evaluation of ``eval_set`` at parallelism n."""
    sets = InMemoryEvalSetsManager()
    sets.create_eval_set(app_name=app_name, eval_set_id=eval_set.eval_set_id)
    for case in eval_set.eval_cases:
        sets.add_eval_case(app_name=app_name, eval_set_id=eval_set.eval_set_id, eval_case=case)
    service = LocalEvalService(
        root_agent=agent,
        eval_sets_manager=sets,
        eval_set_results_manager=LocalEvalSetResultsManager(agents_dir=results_dir),
        user_simulator_provider=UserSimulatorProvider(
            user_simulator_config=config.user_simulator_config
        ),
        metric_evaluator_registry=register_custom_metrics_from_config(config),
        app=app,
    )
    request = InferenceRequest(
        app_name=app_name,
        eval_set_id=eval_set.eval_set_id,
        eval_case_ids=[],
        inference_config=InferenceConfig(parallelism=n),
    )
    started = time.perf_counter()
    inferences = [result async for result in service.perform_inference(request)]
    evaluate = EvaluateRequest(
        inference_results=inferences,
        evaluate_config=EvaluateConfig(
            eval_metrics=get_eval_metrics_from_config(config), parallelism=n
        ),
    )
    results = [result async for result in service.evaluate(evaluate)]
    seconds = time.perf_counter() - started
    passed = sum(1 for result in results if result.final_eval_status == EvalStatus.PASSED)
    return len(results), passed, seconds


async def main_async(args: argparse.Namespace) -> None:
    agent_dir = str(Path(args.agent).resolve())
    app, agent = await get_app_or_root_agent(agent_dir)
    app_name = Path(agent_dir).name
    config = get_evaluation_criteria_or_default(args.config)
    eval_set = load_eval_set_from_file(args.evalset, args.evalset)
    if args.warmup:
        warm = eval_set.model_copy(update={"eval_cases": eval_set.eval_cases[: args.warmup]})
        await run_set(agent, app, app_name, warm, config, args.results_dir, 1)
    for n in (int(value) for value in args.parallelism.split(",")):
        runs = [
            await run_set(agent, app, app_name, eval_set, config, args.results_dir, n)
            for _ in range(args.repeat)
        ]
        cases = min(run[0] for run in runs)
        passed = min(run[1] for run in runs)
        seconds = statistics.median(run[2] for run in runs)
        print(
            f"RESULT peer=adk parallelism={n} cases={cases} passed={passed} seconds={seconds:.4f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--evalset", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--results-dir", required=True)
    parser.add_argument("--parallelism", default="1,4")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3, help="runs per parallelism (median)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    try:
        asyncio.run(main_async(args))
    except Exception as error:
        reason = f"{type(error).__name__}: {error}".replace("\n", " ")[:300]
        print(f"FAILED peer=adk reason={reason}", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
