"""How long a fresh process takes to `import cairn` and to print `cairn --help`.

    .venv/bin/python bench/cli_start.py [--runs 15] [--quick] [--no-peer] [--no-install]

Issue 19's targets: `import cairn` <= 0.3 s and `cairn --help` <= 0.5 s, measured in the same
run as `python -c pass` (what any Python process costs here) and google-adk 2.13.0's
`adk --help` (from bench/.peers/adk, made by bench/peers.py's `ensure_venv` the first time).
Each round starts every command once, in turn, as a fresh process, so drift in the machine's
load hits all of them alike; a row shows the median wall time over `--runs` rounds, after
one warm-up round that is not counted (it writes the bytecode caches). It measures and
prints; it asserts no timing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
TIMEOUT = 120  # seconds for one process
TARGETS_MS = {"import cairn": 300.0, "cairn --help": 500.0}


@dataclass(frozen=True)
class Row:
    label: str
    command: list[str]
    note: str = ""


def adk_command(install: bool) -> list[str] | str:
    """`adk --help` from the peer venv, or why it cannot run."""
    sys.path.insert(0, str(BENCH))
    import peers

    try:
        python = peers.ensure_venv(peers.PEERS["adk"], install)
    except RuntimeError as error:
        return str(error)
    adk = python.parent / "adk"
    return [str(adk), "--help"] if adk.exists() else f"no {adk}"


def rows(peer: list[str] | str | None) -> tuple[list[Row], dict[str, str]]:
    python = sys.executable
    cairn = str(Path(python).parent / "cairn")
    found = [
        Row("python -c pass", [python, "-c", "pass"], "a bare interpreter"),
        Row("import cairn", [python, "-c", "import cairn"]),
        Row("cairn --help", [cairn, "--help"]),
        Row(
            "from cairn import Runner, Agent",
            [python, "-c", "from cairn import Runner, Agent"],
            "context: the first use of the names imports their layers",
        ),
    ]
    missing: dict[str, str] = {}
    if isinstance(peer, list):
        found.append(Row("adk --help", peer, "google-adk 2.13.0"))
    elif isinstance(peer, str):
        missing["adk --help"] = peer
    return found, missing


def run_once(row: Row, cwd: str) -> float:
    """Wall milliseconds from start to exit of one fresh process."""
    started = time.perf_counter()
    done = subprocess.run(
        row.command, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines() or ["no output"]
        raise RuntimeError(f"{row.label} exited {done.returncode}: {lines[-1][:200]}")
    return elapsed


def measure(found: list[Row], runs: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {row.label: [] for row in found}
    with tempfile.TemporaryDirectory() as cwd:  # no .env or agent folder around
        for round_ in range(runs + 1):
            for row in found:
                elapsed = run_once(row, cwd)
                if round_ > 0:
                    samples[row.label].append(elapsed)
    return {label: statistics.median(values) for label, values in samples.items()}


def report(medians: dict[str, float], missing: dict[str, str], found: list[Row], runs: int) -> None:
    base = medians["python -c pass"]
    adk = medians.get("adk --help")
    print(f"cairn start-up: median wall time of {runs} fresh processes each, alternating")
    print(f"{'command':34} {'ms':>8} {'- bare':>8} {'/ adk --help':>12}  target")
    for row in found:
        ms = medians[row.label]
        over_adk = f"{ms / adk:.2f}x" if adk else "n/a"
        target = TARGETS_MS.get(row.label)
        goal = ""
        if target is not None:
            goal = f"<= {target:.0f} ms: {'met' if ms <= target else 'NOT met'}"
        extra = f"  ({row.note})" if row.note else ""
        print(f"{row.label:34} {ms:8.1f} {ms - base:8.1f} {over_adk:>12}  {goal}{extra}")
    for label, reason in missing.items():
        print(f"{label:34} {'n/a':>8}  failed: {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="rounds to take the median of")
    parser.add_argument("--quick", action="store_true", help="3 rounds (a smoke run)")
    parser.add_argument("--no-peer", action="store_true", help="leave out adk --help")
    parser.add_argument(
        "--no-install", action="store_true", help="do not make bench/.peers/adk if missing"
    )
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    if runs < 1:
        parser.error("--runs must be at least 1")
    peer = None if args.no_peer else adk_command(install=not args.no_install)
    found, missing = rows(peer)
    print(f"Python {sys.version.split()[0]} on {os.cpu_count()} CPUs; {sys.executable}")
    report(measure(found, runs), missing, found, runs)


if __name__ == "__main__":
    main()
