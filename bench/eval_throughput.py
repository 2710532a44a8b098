"""Eval cases per second: cairn's evaluation against google-adk 2.13.0's, on one eval set.

    .venv/bin/python bench/eval_throughput.py [--cases 200] [--parallelism 4]
                                              [--no-install] [--no-cli] [--no-adk]
                                              [--profile FILE]

The agent (bench/eval_agents/cairn_weather and adk_weather, the same code on each framework's
classes): an LlmAgent with one tool, get_weather(city), on a zero-latency rule model (a
BaseLlm subclass) whose reply depends only on the request: a user's question -> a call of
get_weather; the tool's response -> one sentence. Each turn is 2 model calls and 1 tool call.

The eval set (ADK's *.evalset.json format, written by this bench into a temporary folder):
--cases cases of 3 turns each, every turn with its expected tool call and final response,
and test_config.json beside it: tool_trajectory_avg_score 1.0, response_match_score 0.8.

Table 1, in-process (eval service only, no process start): per framework, the eval set through
its LocalEvalService (perform_inference over every case, then evaluate, results saved as
`cairn eval` and `adk eval` save them), timed from the first inference to the last result.
"serial" is parallelism 1 (inference and scoring); "concurrent" is --parallelism (default 4,
the default of both `cairn eval --parallelism` and ADK's InferenceConfig/EvaluateConfig). Each
side runs 5 cases once first, untimed (imports, first calls). ADK runs in its own venv,
bench/.peers/adk-eval (google-adk[eval]==2.13.0, made with pip the first time), via
bench/peer_adk_eval.py; it runs first, then cairn in this process, so they never share the CPU.

Table 2, end to end: wall time of `cairn eval AGENT_DIR EVALSET` against `adk eval AGENT_DIR
EVALSET` (each CLI as a user runs it, process start and imports included; both at their
default parallelism of 4), on copies of the agent folders in the temporary folder.

Every run must pass all cases on both sides, else the comparison is void: the bench says so
and exits 1. It measures; it asserts no timing. --profile FILE writes cProfile stats of
cairn's concurrent run to FILE and prints its top functions to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import platform
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from cairn.cli._loading import Target, load_target  # noqa: E402
from cairn.evaluation.base_eval_service import (  # noqa: E402
    EvaluateConfig,
    EvaluateRequest,
    InferenceConfig,
    InferenceRequest,
)
from cairn.evaluation.eval_config import (  # noqa: E402
    get_eval_metrics_from_config,
    get_evaluation_criteria_or_default,
)
from cairn.evaluation.evaluator import EvalStatus  # noqa: E402
from cairn.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager  # noqa: E402
from cairn.evaluation.local_eval_service import LocalEvalService  # noqa: E402
from cairn.evaluation.local_eval_set_results_manager import (  # noqa: E402
    LocalEvalSetResultsManager,
)
from cairn.evaluation.local_eval_sets_manager import load_eval_set_from_file  # noqa: E402
from cairn.evaluation.metric_evaluator_registry import (  # noqa: E402
    register_custom_metrics_from_config,
)
from cairn.evaluation.simulation.user_simulator_provider import (  # noqa: E402
    UserSimulatorProvider,
)
from cairn.sessions.in_memory_session_service import InMemorySessionService  # noqa: E402
from peers import Peer, ensure_venv, parse_line  # noqa: E402

AGENTS = BENCH / "eval_agents"
TURNS = 3
WARMUP = 5
PEER_TIMEOUT = 1800
CLI_TIMEOUT = 1800
ADK_EVAL = Peer("adk-eval", "google-adk 2.13.0", "peer_adk_eval.py", ["google-adk[eval]==2.13.0"])
CRITERIA = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def city(case: int, turn: int) -> str:
    return f"Town{case:04d}x{turn}"


def eval_set(cases: int) -> dict[str, Any]:
    """ADK's eval set JSON: ``cases`` cases of TURNS turns, each expecting what the agent does."""

    def turn(case: int, index: int) -> dict[str, Any]:
        name = city(case, index)
        return {
            "invocation_id": f"c{case}-t{index}",
            "user_content": {
                "role": "user",
                "parts": [{"text": f"What is the weather in {name}?"}],
            },
            "final_response": {
                "role": "model",
                "parts": [{"text": f"It is {10 + len(name)}°C in {name}."}],
            },
            "intermediate_data": {
                "tool_uses": [{"name": "get_weather", "args": {"city": name}}],
                "intermediate_responses": [],
            },
        }

    return {
        "eval_set_id": "weather_throughput",
        "name": "weather throughput",
        "description": f"{cases} cases of {TURNS} weather questions each.",
        "eval_cases": [
            {"eval_id": f"case_{case:04d}", "conversation": [turn(case, t) for t in range(TURNS)]}
            for case in range(cases)
        ],
    }


def write_inputs(folder: Path, cases: int) -> tuple[Path, Path, Path]:
    """The eval set file and its test_config.json, and an agents folder with copies of both
    agents (the CLIs write their results under it)."""
    sets = folder / "sets"
    sets.mkdir()
    evalset = sets / "weather_throughput.evalset.json"
    evalset.write_text(json.dumps(eval_set(cases), indent=1, ensure_ascii=False))
    config = sets / "test_config.json"
    config.write_text(json.dumps(CRITERIA))
    agents = folder / "agents"
    for name in ("cairn_weather", "adk_weather"):
        shutil.copytree(AGENTS / name, agents / name, ignore=shutil.ignore_patterns("__pycache__"))
    return evalset, config, agents


@dataclass
class Row:
    framework: str
    mode: str
    cases: int = 0
    passed: int = 0
    seconds: float | None = None
    failure: str | None = None

    @property
    def rate(self) -> float | None:
        return self.cases / self.seconds if self.seconds else None

    @property
    def ok(self) -> bool:
        return self.failure is None and self.cases > 0 and self.passed == self.cases


# ---- cairn, in process ------------------------------------------------------------------


async def cairn_run(target: Target, evalset: Path, config_file: Path, results: Path, n: int) -> Row:
    """One inference + evaluation of the eval set through cairn's LocalEvalService, built as
    `cairn eval` builds it, at parallelism ``n``."""
    config = get_evaluation_criteria_or_default(str(config_file))
    loaded = load_eval_set_from_file(str(evalset), str(evalset))
    app_name = "cairn_weather"
    sets = InMemoryEvalSetsManager()
    sets.create_eval_set(app_name=app_name, eval_set_id=loaded.eval_set_id)
    for case in loaded.eval_cases:
        sets.add_eval_case(app_name=app_name, eval_set_id=loaded.eval_set_id, eval_case=case)
    service = LocalEvalService(
        root_agent=target.agent,
        eval_sets_manager=sets,
        metric_evaluator_registry=register_custom_metrics_from_config(config),
        session_service=InMemorySessionService(),
        eval_set_results_manager=LocalEvalSetResultsManager(agents_dir=str(results)),
        user_simulator_provider=UserSimulatorProvider(
            user_simulator_config=config.user_simulator_config
        ),
        app=target.app,
    )
    request = InferenceRequest(
        app_name=app_name,
        eval_set_id=loaded.eval_set_id,
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
    scored = [result async for result in service.evaluate(evaluate)]
    seconds = time.perf_counter() - started
    passed = sum(1 for r in scored if r.final_eval_status == EvalStatus.PASSED)
    return Row("cairn", mode_name(n), len(scored), passed, seconds)


def median_row(runs: list[Row]) -> Row:
    """One row for repeated runs: the median time, the fewest cases passed."""
    seconds = statistics.median(run.seconds or 0.0 for run in runs)
    passed = min(run.passed for run in runs)
    return Row(runs[0].framework, runs[0].mode, min(r.cases for r in runs), passed, seconds)


def mode_name(n: int) -> str:
    return "serial (parallelism 1)" if n == 1 else f"concurrent (parallelism {n})"


def run_cairn(
    agents: Path,
    evalset: Path,
    config: Path,
    parallelisms: list[int],
    repeat: int,
    profile: str | None,
) -> list[Row]:
    target = load_target(agents / "cairn_weather")
    results = agents.parent / "cairn-results"
    warm = agents.parent / "sets" / "warmup.evalset.json"
    whole = load_eval_set_from_file(str(evalset), str(evalset))
    warm.write_text(
        whole.model_copy(update={"eval_cases": whole.eval_cases[:WARMUP]}).model_dump_json()
    )
    asyncio.run(cairn_run(target, warm, config, results, 1))
    rows = []
    for n in parallelisms:
        say(f"[cairn] parallelism {n} ...")
        try:
            runs = [
                asyncio.run(cairn_run(target, evalset, config, results, n)) for _ in range(repeat)
            ]
        except Exception as error:
            rows.append(Row("cairn", mode_name(n), failure=f"{type(error).__name__}: {error}"))
            continue
        rows.append(median_row(runs))
        if profile and n == 1:
            profiler = cProfile.Profile()
            profiler.enable()
            asyncio.run(cairn_run(target, evalset, config, results, n))
            profiler.disable()
            profiler.dump_stats(profile)
            stats = pstats.Stats(profile, stream=sys.stderr)
            stats.sort_stats("cumulative").print_stats(40)
            stats.sort_stats("tottime").print_stats(25)
    return rows


# ---- google-adk, in its venv --------------------------------------------------------------


def run_adk(
    python: Path, agents: Path, evalset: Path, config: Path, parallelisms: list[int], repeat: int
) -> list[Row]:
    say("[adk] LocalEvalService ...")
    command = [
        str(python),
        str(BENCH / ADK_EVAL.script),
        f"--agent={agents / 'adk_weather'}",
        f"--evalset={evalset}",
        f"--config={config}",
        f"--results-dir={agents.parent / 'adk-results'}",
        f"--parallelism={','.join(map(str, parallelisms))}",
        f"--warmup={WARMUP}",
        f"--repeat={repeat}",
    ]
    done = _run(command, PEER_TIMEOUT, agents.parent)
    if isinstance(done, str):
        return [Row("google-adk 2.13.0", "in-process", failure=done)]
    rows = []
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            fields = parse_line(line)
            rows.append(
                Row(
                    "google-adk 2.13.0",
                    mode_name(int(fields["parallelism"])),
                    int(fields["cases"]),
                    int(fields["passed"]),
                    float(fields["seconds"]),
                )
            )
        elif line.startswith("FAILED "):
            rows.append(
                Row("google-adk 2.13.0", "in-process", failure=parse_line(line).get("reason"))
            )
    if done.returncode != 0 and not any(row.failure for row in rows):
        rows.append(
            Row("google-adk 2.13.0", "in-process", failure=f"exit {done.returncode}: {tail(done)}")
        )
    return rows


# ---- the two CLIs ----------------------------------------------------------------------


def tail(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return (lines[-1] if lines else "no output")[:200]


def _run(command: list[str], timeout: int, cwd: Path) -> subprocess.CompletedProcess[str] | str:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["HOME"] = str(cwd)  # ADK keeps per-user CLI files (~/.adk) there: not the real home
    try:
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout}s"


def run_clis(
    adk_python: Path | None, agents: Path, evalset: Path, config: Path, repeat: int
) -> list[Row]:
    rows = []
    cairn_cli = Path(sys.executable).parent / "cairn"
    say("[cli] cairn eval ...")
    rows.append(
        _cli(
            "cairn",
            "`cairn eval` (parallelism 4)",
            [
                str(cairn_cli),
                "eval",
                str(agents / "cairn_weather"),
                str(evalset),
                f"--config={config}",
            ],
            agents,
            r"(\d+) of (\d+) cases passed",
            repeat,
        )
    )
    if adk_python is not None:
        say("[cli] adk eval ...")
        rows.append(
            _cli(
                "google-adk 2.13.0",
                "`adk eval` (parallelism 4)",
                [
                    str(adk_python.parent / "adk"),
                    "eval",
                    str(agents / "adk_weather"),
                    str(evalset),
                    f"--config_file_path={config}",
                ],
                agents,
                r"Tests passed: (\d+)\s+Tests failed: (\d+)",
                repeat,
            )
        )
    return rows


def _cli(
    framework: str, mode: str, command: list[str], agents: Path, pattern: str, repeat: int
) -> Row:
    runs = [_cli_once(framework, mode, command, agents, pattern) for _ in range(repeat)]
    failed = [run for run in runs if run.failure]
    return failed[0] if failed else median_row(runs)


def _cli_once(framework: str, mode: str, command: list[str], agents: Path, pattern: str) -> Row:
    started = time.perf_counter()
    done = _run(command, CLI_TIMEOUT, agents.parent)
    seconds = time.perf_counter() - started
    if isinstance(done, str):
        return Row(framework, mode, failure=done)
    found = re.search(pattern, done.stdout)
    if found is None:
        return Row(framework, mode, failure=f"exit {done.returncode}, no summary: {tail(done)}")
    first, second = int(found.group(1)), int(found.group(2))
    # cairn prints "P of N cases passed"; adk prints "Tests passed: P / Tests failed: F".
    passed, cases = (first, second) if framework == "cairn" else (first, first + second)
    row = Row(framework, mode, cases, passed, seconds)
    if done.returncode != 0 and passed == cases:
        row.failure = f"exit {done.returncode}: {tail(done)}"
    return row


# ---- the tables --------------------------------------------------------------------------


def table(rows: list[Row], cases_wanted: int) -> str:
    cairn = {row.mode.split(" (")[0]: row for row in rows if row.framework == "cairn"}
    header = ["framework", "mode", "cases", "passed", "seconds", "cases/s", "cairn/ADK"]
    lines = [header]
    for row in rows:
        if row.failure:
            shown = row.failure if len(row.failure) <= 70 else row.failure[:67] + "..."
            lines.append([row.framework, row.mode, str(cases_wanted), "-", "-", "-", shown])
            continue
        speedup = "-"
        ours = cairn.get(row.mode.split(" (")[0].replace("`adk eval`", "`cairn eval`"))
        if row.framework != "cairn" and ours and ours.rate and row.rate:
            speedup = f"{ours.rate / row.rate:.1f}x"
        lines.append(
            [
                row.framework,
                row.mode,
                str(row.cases),
                str(row.passed),
                f"{row.seconds:.2f}",
                f"{row.rate:,.1f}",
                speedup,
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for index, line in enumerate(lines):
        out.append("  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)))
        if index == 0:
            out.append("  ".join("-" * width for width in widths))
    return "\n".join(text.rstrip() for text in out)


def goal_line(rows: list[Row], cli_rows: list[Row]) -> str:
    """The issue's goal, and each cairn/ADK ratio measured against it."""
    parts = []
    for wanted, theirs_mode, label in (
        ("serial (parallelism 1)", "serial (parallelism 1)", "serial"),
        ("concurrent", "concurrent", "concurrent"),
        ("`cairn eval`", "`adk eval`", "CLI"),
    ):
        ours = next(
            (r for r in rows + cli_rows if r.framework == "cairn" and r.mode.startswith(wanted)),
            None,
        )
        theirs = next(
            (
                r
                for r in rows + cli_rows
                if r.framework != "cairn" and r.mode.startswith(theirs_mode)
            ),
            None,
        )
        if ours and theirs and ours.ok and theirs.ok and ours.rate and theirs.rate:
            ratio = ours.rate / theirs.rate
            parts.append(f"{label} {ratio:.1f}x ({'met' if ratio >= 10 else 'NOT met'})")
    measured = "; ".join(parts) if parts else "no ratio measured"
    goal = "Goal (issue 17): cairn >= 10x ADK in cases/s, serial and concurrent."
    return f"{goal} Measured: {measured}."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=200, help="eval cases (3 turns each)")
    parser.add_argument("--parallelism", type=int, default=4, help="the concurrent mode's")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--no-install", action="store_true", help="use an existing ADK venv")
    parser.add_argument("--no-cli", action="store_true", help="skip table 2 (the CLIs)")
    parser.add_argument("--no-adk", action="store_true", help="cairn only (no comparison)")
    parser.add_argument("--profile", metavar="FILE", help="cProfile cairn's concurrent run")
    args = parser.parse_args()
    parallelisms = [1, args.parallelism]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cairn-eval-bench-") as temporary:
        folder = Path(temporary)
        evalset, config, agents = write_inputs(folder, args.cases)
        adk_python: Path | None = None
        rows: list[Row] = []
        if not args.no_adk:
            try:
                adk_python = ensure_venv(ADK_EVAL, install=not args.no_install)
            except Exception as error:
                rows.append(Row("google-adk 2.13.0", "in-process", failure=f"install: {error}"))
        if adk_python is not None:
            rows += run_adk(adk_python, agents, evalset, config, parallelisms, args.repeat)
        rows = run_cairn(agents, evalset, config, parallelisms, args.repeat, args.profile) + rows
        cli_rows = [] if args.no_cli else run_clis(adk_python, agents, evalset, config, args.repeat)
    elapsed = time.perf_counter() - started
    print(
        f"cairn vs google-adk 2.13.0, eval throughput; Python {sys.version.split()[0]}; "
        f"{platform.machine()}, {os.cpu_count()} CPUs; {args.cases} cases x {TURNS} turns "
        f"(2 model calls + 1 tool call a turn, zero-latency model); {elapsed:.0f} s"
    )
    print()
    print("In process: LocalEvalService.perform_inference + evaluate (no process start)")
    print(table(rows, args.cases))
    if cli_rows:
        print()
        print("End to end: the CLI's wall time (process start, imports and agent loading included)")
        print(table(cli_rows, args.cases))
    print()
    print(goal_line(rows, cli_rows))
    everything = rows + cli_rows
    void = [row for row in everything if not row.ok]
    for row in void:
        why = row.failure or f"{row.passed} of {row.cases} cases passed"
        print(f"VOID: {row.framework}, {row.mode}: {why}")
    if void or (not args.no_adk and not any(r.framework != "cairn" for r in rows)):
        print("The comparison is void: every run must pass every case.")
        sys.exit(1)


if __name__ == "__main__":
    main()
