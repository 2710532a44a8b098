"""cairn against google-adk 2.13.0 and LangGraph on the workloads of bench/workflows.py.

    .venv/bin/python bench/peers.py [--quick] [--stores memory,sqlite,postgres]
                                    [--peers adk,langgraph] [--no-install]

Each peer gets its own virtual environment under bench/.peers/ (gitignored), made here with
`python -m venv` and filled with pip from PyPI the first time, reused after that (a marker
file records what was installed; a changed requirement list reinstalls):

    bench/.peers/adk        google-adk[a2a]==2.13.0 (+ aiosqlite, asyncpg for its SQL stores;
                            the a2a extra for tests/a2a/interop and bench/a2a_round_trips.py;
                            uvloop and httptools, which cairn's uvicorn[standard] brings)
    bench/.peers/langgraph  langgraph>=1.0, langgraph-checkpoint-sqlite,
                            langgraph-checkpoint-postgres, psycopg[binary]

Inside each, bench/peer_adk.py or bench/peer_langgraph.py (neither imports cairn) runs the
two workloads, one store per subprocess with a time limit, and prints `RESULT ...` lines.
Then cairn's own figures come from the functions of bench/workflows.py, in this process,
after the peers have finished (so they never share the CPU). One table follows: rows are
workload x store, columns cairn, google-adk, LangGraph, the ratios cairn/peer and the
targets of the issue. A peer that cannot be installed or run shows as "failed: <reason>".
It measures and prints; it asserts no timing. bench/hitl_peers.py reuses `ensure_venv` and
`run_peer_script` for its own peer script (bench/peer_adk_hitl.py).
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
PEERS_DIR = BENCH / ".peers"
STORES = ("memory", "sqlite", "postgres")
PER_STORE_TIMEOUT = 240  # seconds for one peer on one store (both workloads)
INSTALL_TIMEOUT = 900


@dataclass
class Peer:
    key: str
    title: str
    script: str
    requirements: list[str]
    results: dict[tuple[str, str], float] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)  # store ("*" = all) -> reason


PEERS = {
    "adk": Peer(
        "adk",
        "google-adk 2.13.0",
        "peer_adk.py",
        [
            "google-adk[a2a]==2.13.0",
            "aiosqlite",
            "asyncpg",
            "sqlalchemy[asyncio]",
            "mcp",
            # cairn depends on uvicorn[standard]: its servers run on uvloop and httptools;
            # ADK's servers get the same (bench/a2a_round_trips.py, bench/api_server.py).
            "uvloop",
            "httptools",
        ],
    ),
    "langgraph": Peer(
        "langgraph",
        "LangGraph",
        "peer_langgraph.py",
        [
            "langgraph>=1.0",
            "langgraph-checkpoint-sqlite",
            "langgraph-checkpoint-postgres",
            "psycopg[binary]",
        ],
    ),
}


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def last_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return (lines[-1] if lines else "no output")[:200]


def ensure_venv(peer: Peer, install: bool) -> Path:
    """The peer's venv python, made and filled if needed; raises RuntimeError with a reason.

    Several processes may ask at once (the test suite runs in parallel workers): the first
    makes the venv while the others wait on a lock file, then find it made.
    """
    PEERS_DIR.mkdir(exist_ok=True)
    with open(PEERS_DIR / f".{peer.key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_venv_locked(peer, install)


def _ensure_venv_locked(peer: Peer, install: bool) -> Path:
    folder = PEERS_DIR / peer.key
    python = folder / "bin" / "python"
    marker = folder / ".bench-requirements.json"
    if python.exists() and marker.exists() and json.loads(marker.read_text()) == peer.requirements:
        return python
    if not install:
        raise RuntimeError(f"no venv at {folder} (run without --no-install)")
    say(f"[{peer.key}] creating {folder} and installing {' '.join(peer.requirements)} ...")
    base = getattr(sys, "_base_executable", sys.executable)
    steps = [
        [base, "-m", "venv", "--clear", str(folder)],
        [str(python), "-m", "pip", "install", "--quiet", *peer.requirements],
    ]
    for command in steps:
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired as error:
            raise RuntimeError(f"install timed out after {INSTALL_TIMEOUT}s") from error
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if "ERROR" in line]
            reason = errors[0] if errors else last_line(done.stderr or done.stdout)
            raise RuntimeError(f"{Path(command[0]).name} exited {done.returncode}: {reason}")
    marker.write_text(json.dumps(peer.requirements))
    return python


def parse_line(line: str) -> dict[str, str]:
    """The `key=value` fields of a `RESULT ...` or `FAILED ...` line (`reason=` takes the rest)."""
    head, _, reason = line.partition(" reason=")
    fields = dict(part.split("=", 1) for part in head.split()[1:] if "=" in part)
    if reason:
        fields["reason"] = reason
    return fields


def run_peer_script(
    peer: Peer,
    python: Path,
    script: str,
    stores: list[str],
    arguments: list[str],
    timeout: int = PER_STORE_TIMEOUT,
) -> None:
    """Run `script` in the peer's venv once per store, into peer.results and peer.failures."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    for store in stores:
        say(f"[{peer.key}] {store} ...")
        command = [str(python), str(BENCH / script), *arguments, f"--stores={store}"]
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=BENCH,
                env=env,
                check=False,
            )
        except subprocess.TimeoutExpired:
            peer.failures[store] = f"timed out after {timeout}s"
            continue
        for line in done.stdout.splitlines():
            if line.startswith(("RESULT ", "FAILED ")):
                fields = parse_line(line)
                if line.startswith("RESULT "):
                    key = (fields["workload"], fields["store"])
                    peer.results[key] = float(fields["value"])
                else:
                    peer.failures[store] = fields.get("reason", "no reason given")
        if done.returncode != 0 and store not in peer.failures:
            peer.failures[store] = f"exit {done.returncode}: {last_line(done.stderr)}"
        elif not any(key[1] == store for key in peer.results) and store not in peer.failures:
            peer.failures[store] = "printed no result"


def run_peer(peer: Peer, python: Path, stores: list[str], invocations: int, rounds: int) -> None:
    arguments = [f"--invocations={invocations}", f"--rounds={rounds}"]
    run_peer_script(peer, python, peer.script, stores, arguments)


def load_workflows() -> Any:
    spec = importlib.util.spec_from_file_location("cairn_bench_workflows", BENCH / "workflows.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def run_cairn(
    stores: list[str], invocations: int, rounds: int
) -> tuple[dict[tuple[str, str], float], dict[str, str]]:
    results: dict[tuple[str, str], float] = {}
    failures: dict[str, str] = {}
    try:
        workflows = load_workflows()
    except Exception as error:
        return results, dict.fromkeys(stores, f"{type(error).__name__}: {error}")
    for store in stores:
        say(f"[cairn] {store} ...")
        try:
            rate = await workflows.with_store(store, lambda s: workflows.throughput(s, invocations))
            times = await workflows.with_store(store, lambda s: workflows.resume_times(s, rounds))
        except Exception as error:
            failures[store] = f"{type(error).__name__}: {error}".replace("\n", " ")[:200]
            continue
        results[("throughput", store)] = rate
        results[("resume10", store)] = times[10] * 1000
        results[("resume200", store)] = times[rounds] * 1000
    return results, failures


def number(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "/s":
        return f"{value:,.0f}/s" if value >= 100 else f"{value:,.1f}/s"
    return f"{value:.2f} ms" if value < 100 else f"{value:,.0f} ms"


def cell(results: dict[tuple[str, str], float], failures: dict[str, str], key: Any) -> str:
    workload, store = key
    for where in (store, "*"):
        if where in failures and key not in results:
            reason = failures[where]
            if reason == "not run":
                return reason
            return f"failed: {reason if len(reason) <= 60 else reason[:57] + '...'}"
    if workload == "flat":
        early, late = results.get(("resume10", store)), results.get(("resume200", store))
        return f"{late / early:.2f}x" if early and late else "-"
    return number(results.get(key), "/s" if workload == "throughput" else "ms")


def ratio(
    ours: dict[tuple[str, str], float], theirs: dict[tuple[str, str], float], key: Any
) -> float | None:
    if key[0] == "flat":
        return None
    a, b = ours.get(key), theirs.get(key)
    return a / b if a and b else None


def verdict(
    key: tuple[str, str],
    ours: dict[tuple[str, str], float],
    adk: dict[tuple[str, str], float],
    lg: dict[tuple[str, str], float],
) -> str:
    """The issue's target for this row and whether it is met (or n/a when a figure is missing)."""
    workload, store = key

    def check(parts: list[tuple[str, bool | None]]) -> str:
        shown = [
            f"{text} {'ok' if met else 'MISSED' if met is False else 'n/a'}" for text, met in parts
        ]
        return "; ".join(shown)

    if workload == "throughput":
        to_adk, to_lg = ratio(ours, adk, key), ratio(ours, lg, key)
        if store == "memory":
            return check(
                [
                    (">=20x ADK", None if to_adk is None else to_adk >= 20),
                    (">=2x LG", None if to_lg is None else to_lg >= 2),
                ]
            )
        return check([(">=1.5x LG", None if to_lg is None else to_lg >= 1.5)])
    if workload == "flat":
        early, late = ours.get(("resume10", store)), ours.get(("resume200", store))
        return check([("<=1.5x", None if not (early and late) else late / early <= 1.5)])
    if workload == "resume200":
        mine = ours.get(key)
        parts: list[tuple[str, bool | None]] = []
        for name, peer in (("ADK", adk), ("LG", lg)):
            theirs = peer.get(key)
            parts.append((f"< {name}", None if not (mine and theirs) else mine < theirs))
        return check(parts)
    return ""


def table(
    stores: list[str],
    rounds: int,
    cairn: tuple[dict[tuple[str, str], float], dict[str, str]],
    adk: Peer | None,
    lg: Peer | None,
) -> str:
    ours, our_failures = cairn
    adk_results, adk_failures = (adk.results, adk.failures) if adk else ({}, {"*": "not run"})
    lg_results, lg_failures = (lg.results, lg.failures) if lg else ({}, {"*": "not run"})
    names = {
        "throughput": "5-node throughput",
        "resume10": "resume @10",
        "resume200": f"resume @{rounds}",
        "flat": f"resume @{rounds} / @10",
    }
    header = [
        "workload",
        "store",
        "cairn",
        "google-adk 2.13.0",
        "LangGraph",
        "cairn/ADK",
        "cairn/LG",
        "target (issue)",
    ]
    rows = [header]
    for workload in ("throughput", "resume10", "resume200", "flat"):
        for store in stores:
            key = (workload, store)
            to_adk, to_lg = ratio(ours, adk_results, key), ratio(ours, lg_results, key)
            rows.append(
                [
                    names[workload],
                    store,
                    cell(ours, our_failures, key),
                    cell(adk_results, adk_failures, key),
                    cell(lg_results, lg_failures, key),
                    "-" if to_adk is None else f"{to_adk:.3g}x",
                    "-" if to_lg is None else f"{to_lg:.3g}x",
                    verdict(key, ours, adk_results, lg_results),
                ]
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = []
    for index, row in enumerate(rows):
        lines.append("  ".join(text.ljust(width) for text, width in zip(row, widths, strict=True)))
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="30 invocations, 20 rounds")
    parser.add_argument("--stores", default=",".join(STORES))
    parser.add_argument("--peers", default="adk,langgraph")
    parser.add_argument("--no-install", action="store_true", help="use existing venvs only")
    args = parser.parse_args()
    invocations, rounds = (30, 20) if args.quick else (200, 200)
    stores = [store for store in args.stores.split(",") if store]
    chosen = [PEERS[key] for key in args.peers.split(",") if key]
    started = time.perf_counter()
    for peer in chosen:
        try:
            python = ensure_venv(peer, install=not args.no_install)
        except Exception as error:
            say(f"[{peer.key}] install failed: {error}")
            peer.failures["*"] = f"install: {error}"
            continue
        run_peer(peer, python, stores, invocations, rounds)
    cairn = asyncio.run(run_cairn(stores, invocations, rounds))
    elapsed = time.perf_counter() - started
    print(
        f"cairn vs peers, workflow benchmark; Python {sys.version.split()[0]}; "
        f"{invocations} invocations, {rounds} rounds; {elapsed:.0f} s"
    )
    picked = {peer.key: peer for peer in chosen}
    print(table(stores, rounds, cairn, picked.get("adk"), picked.get("langgraph")))
    print(
        "Throughput in invocations/s (ratio > 1: cairn faster). Resume = median time to "
        "resume the paused middle node, rounds 8-10 and the last three (ratio < 1: cairn "
        "faster). 'resume @N / @10' is each framework's own growth."
    )
    named = [("cairn", cairn[1]), *((peer.title, peer.failures) for peer in chosen)]
    for title, failures in named:
        for where, reason in failures.items():
            print(f"failed: {title} on {'every store' if where == '*' else where}: {reason}")


if __name__ == "__main__":
    main()
