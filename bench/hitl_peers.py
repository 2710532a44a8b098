"""cairn against google-adk 2.13.0 on bench/hitl.py's tool-confirmation rounds, in one table.

    .venv/bin/python bench/hitl_peers.py [--quick] [--rounds 200]
                                         [--stores memory,sqlite,postgres] [--no-install]

google-adk runs first, in bench/.peers/adk (made and filled by bench/peers.py's installer on
first use, reused after), one store per subprocess of bench/peer_adk_hitl.py with a time limit.
Then cairn runs the same rounds through the functions of bench/hitl.py, in this process, after
ADK has finished, so the two never share the CPU. One table follows: per store, rounds/s (ask
+ resume), the resume latency at round 10 and at the last round, each framework's own growth
between the two, cairn/ADK, and the target (cairn's resume flat: last / round 10 <= 1.5x).
A store that fails shows as "failed: <reason>" (the full reason is printed below the table).
It measures and prints; it asserts no timing.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH = Path(__file__).resolve().parent
STORES = ("memory", "sqlite", "postgres")
PER_STORE_TIMEOUT = 900  # seconds for ADK's 200 rounds on one store (~30-60 s measured)
FLAT = 1.5

Results = dict[tuple[str, str], float]


def load(name: str) -> ModuleType:
    """bench/<name>.py as a module (registered first, so its dataclasses resolve)."""
    spec = importlib.util.spec_from_file_location(f"cairn_bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def one_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".replace("\n", " ")[:300]


async def run_cairn(stores: list[str], rounds: int) -> tuple[Results, dict[str, str]]:
    results: Results = {}
    failures: dict[str, str] = {}
    try:
        hitl = load("hitl")
    except Exception as error:
        return results, dict.fromkeys(stores, one_line(error))
    for store in stores:
        print(f"[cairn] {store} ...", file=sys.stderr, flush=True)
        try:
            figures = await hitl.measure(store, rounds)
        except Exception as error:
            failures[store] = one_line(error)
            continue
        results[("rounds", store)] = figures.rounds_per_s
        results[("resume10", store)] = figures.resume[10] * 1000
        results[("resume200", store)] = figures.resume[rounds] * 1000
    return results, failures


def growth(results: Results, store: str) -> float | None:
    early, late = results.get(("resume10", store)), results.get(("resume200", store))
    return late / early if early and late else None


def cell(results: Results, failures: dict[str, str], figure: str, store: str, peers: Any) -> str:
    for where in (store, "*"):
        if where in failures and (figure, store) not in results:
            reason = failures[where]
            return f"failed: {reason if len(reason) <= 50 else reason[:47] + '...'}"
    if figure == "flat":
        value = growth(results, store)
        return "-" if value is None else f"{value:.2f}x"
    unit = "/s" if figure == "rounds" else "ms"
    return str(peers.number(results.get((figure, store)), unit))


def table(
    stores: list[str],
    rounds: int,
    cairn: tuple[Results, dict[str, str]],
    adk: tuple[Results, dict[str, str]],
    peers: Any,
) -> str:
    ours, our_failures = cairn
    theirs, their_failures = adk
    names = {
        "rounds": "rounds/s (ask + resume)",
        "resume10": "resume @10",
        "resume200": f"resume @{rounds}",
        "flat": f"resume @{rounds} / @10",
    }
    header = ["store", "figure", "cairn", "google-adk 2.13.0", "cairn/ADK", "target"]
    rows = [header]
    for store in stores:
        for figure, name in names.items():
            if figure == "flat":
                mine = growth(ours, store)
                met = "n/a" if mine is None else "ok" if mine <= FLAT else "MISSED"
                to_adk, target = None, f"cairn <= {FLAT}x: {met}"
            else:
                a, b = ours.get((figure, store)), theirs.get((figure, store))
                to_adk = a / b if a and b else None
                target = "none; shown as cairn/ADK" if figure == "rounds" else ""
            rows.append(
                [
                    store,
                    name,
                    cell(ours, our_failures, figure, store, peers),
                    cell(theirs, their_failures, figure, store, peers),
                    "-" if to_adk is None else f"{to_adk:.3g}x",
                    target,
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
    parser.add_argument("--quick", action="store_true", help="20 rounds")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--stores", default=",".join(STORES))
    parser.add_argument("--no-install", action="store_true", help="use the existing venv only")
    args = parser.parse_args()
    rounds = 20 if args.quick else args.rounds
    if rounds < 10:
        parser.error("--rounds must be at least 10")
    stores = [store for store in args.stores.split(",") if store]
    peers = load("peers")
    known = peers.PEERS["adk"]
    adk = peers.Peer(known.key, known.title, "peer_adk_hitl.py", known.requirements)
    started = time.perf_counter()
    try:
        python = peers.ensure_venv(adk, install=not args.no_install)
    except Exception as error:
        peers.say(f"[adk] install failed: {error}")
        adk.failures["*"] = f"install: {error}"
    else:
        arguments = [f"--rounds={rounds}"]
        peers.run_peer_script(adk, python, adk.script, stores, arguments, PER_STORE_TIMEOUT)
    cairn = asyncio.run(run_cairn(stores, rounds))
    elapsed = time.perf_counter() - started
    print(
        f"cairn vs google-adk 2.13.0, tool confirmation paused and resumed {rounds} times in "
        f"one session per store; Python {sys.version.split()[0]}; {os.cpu_count()} CPUs; "
        f"{elapsed:.0f} s"
    )
    print(table(stores, rounds, cairn, (adk.results, adk.failures), peers))
    print(
        "rounds/s: whole rounds (the message that pauses + the confirmation that resumes), "
        "ratio > 1: cairn faster. Resume: time from sending the confirmation to the model's "
        f"answer, median of rounds 6-14 and of rounds {rounds - 8}-{rounds}; ratio < 1: cairn "
        f"faster. 'resume @{rounds} / @10' is each framework's own growth."
    )
    for title, failures in (("cairn", cairn[1]), (adk.title, adk.failures)):
        for where, reason in failures.items():
            print(f"failed: {title} on {'every store' if where == '*' else where}: {reason}")


if __name__ == "__main__":
    main()
