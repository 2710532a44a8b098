"""How fast the dev UI opens a long session and shows a new turn's events, in headless Chromium.

    .venv/bin/python bench/web_timeline.py [--sizes 100,10000] [--runs 5] [--quick]

Issue 19's targets: a 10,000-event session opens in <= 1 s and a new turn's events appear
<= 0.5 s after the server sends them, the same as for a 100-event session. The bench stores
one SQLite session per size (whole turns of a message, a tool call, its result and a reply
with state changes: tests/support/long_sessions.py), starts the real server (uvicorn, as
`cairn web` does) on that store with bench/web_agents, and drives Debian's Chromium with
Playwright. A MutationObserver installed before the page's scripts stamps when each event
row first appears.

- open: from navigation start to the session's newest event row shown and the page idle
  (no request pending: the later of the row and the last response's end).
- new turn: a message sent from the page; the `ticker` agent yields five events 50 ms
  apart; for each, from its timestamp (set as the agent yields it, just before the server
  commits and sends it) to its row appearing.

Sizes are measured in turn within each round, so drift in the machine's load hits all of
them alike. The first open of each session (the server has not read it yet) is shown apart
from the median of the later ones. It measures and prints; it asserts no timing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.long_sessions import seed_long_session  # noqa: E402
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS, Server, _start_server  # noqa: E402

from cairn.sessions.sqlite_session_service import SqliteSessionService  # noqa: E402

AGENTS = ROOT / "bench" / "web_agents"
APP, USER = "ticker", "bench"
TIMEOUT = 120.0  # seconds before giving up on one step
TARGETS_MS = {"open": 1000.0, "turn": 500.0}
TURN_EVENTS = 5

# Stamps, in epoch milliseconds, the first time each event row is in the page.
STAMP_ROWS = """
window.__rows = {};
new MutationObserver((mutations) => {
  const now = performance.timeOrigin + performance.now();
  for (const mutation of mutations) for (const node of mutation.addedNodes) {
    if (node.nodeType !== 1) continue;
    const rows = node.matches(".event-row") ? [node] : node.querySelectorAll(".event-row");
    for (const row of rows) window.__rows[row.dataset.eventId] ??= now;
  }
}).observe(document, { childList: true, subtree: true });
"""


def session_id(size: int) -> str:
    return f"s{size}"


def seed(store: Path, sizes: list[int]) -> None:
    async def build() -> None:
        service = SqliteSessionService(store)
        try:
            for size in sizes:
                await seed_long_session(
                    service, app_name=APP, user_id=USER, session_id=session_id(size), count=size
                )
        finally:
            await service.close()

    asyncio.run(build())


def server(directory: Path) -> AbstractContextManager[Server]:
    """The real server (uvicorn, as the web tests start it) on the store in ``directory``."""
    return contextmanager(_start_server)(directory, CAIRN_AGENTS_DIR=str(AGENTS))


def newest_events(url: str, size: int, count: int) -> list[dict[str, Any]]:
    """The session's newest events, from the events route (which every version serves)."""
    events = f"{url}/cairn/apps/{APP}/users/{USER}/sessions/{session_id(size)}/events"
    params = {"limit": count, "direction": "backward"}
    found: list[dict[str, Any]] = httpx.get(events, params=params, timeout=TIMEOUT).json()["events"]
    return found


def open_session(browser: Any, url: str, size: int) -> tuple[Any, float, float]:
    """(the page, ms to the newest row, ms to the newest row shown and the page idle)."""
    newest = newest_events(url, size, 1)[-1]["id"]
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(TIMEOUT * 1000)
    context.add_init_script(STAMP_ROWS)
    page = context.new_page()
    page.goto(f"{url}/#{APP}/{USER}/{session_id(size)}")
    page.wait_for_function(f"window.__rows[{newest!r}] !== undefined")
    page.wait_for_selector("#run-status.idle")
    page.wait_for_load_state("networkidle")
    row, idle = page.evaluate(
        """(id) => {
            const row = window.__rows[id] - performance.timeOrigin;
            const ends = performance.getEntriesByType("resource").map((e) => e.responseEnd);
            return [row, Math.max(row, ...ends)];
        }""",
        newest,
    )
    return page, float(row), float(idle)


def new_turn(page: Any, url: str, size: int, text: str) -> list[float]:
    """Ms from each of the turn's agent events' timestamps to its row appearing."""
    page.fill("#message-input", text)
    page.press("#message-input", "Enter")
    page.wait_for_selector("#run-status.running", state="attached")
    page.wait_for_selector("#run-status.idle")
    events = newest_events(url, size, 10)
    turn = [e for e in events if e["invocationId"] == events[-1]["invocationId"]]
    mine = [e for e in turn if e["author"] == APP]
    if len(mine) != TURN_EVENTS:
        raise RuntimeError(f"expected {TURN_EVENTS} events of the turn, got {len(mine)}")
    seen = page.evaluate("window.__rows")
    return [seen[e["id"]] - e["timestamp"] * 1000 for e in mine]


def measure(sizes: list[int], runs: int) -> dict[str, dict[int, Any]]:
    from playwright.sync_api import sync_playwright

    figures: dict[str, dict[int, Any]] = {
        "first open": {},
        "open": {s: [] for s in sizes},
        "row": {s: [] for s in sizes},
        "turn": {s: [] for s in sizes},
    }
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        seed(directory / "sessions.db", sizes)
        with server(directory) as running, sync_playwright() as playwright:
            url = running.url
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for round_ in range(runs + 1):
                for size in sizes:
                    page, row, idle = open_session(browser, url, size)
                    if round_ == 0:
                        figures["first open"][size] = idle
                    else:
                        figures["open"][size].append(idle)
                        figures["row"][size].append(row)
                        figures["turn"][size] += new_turn(page, url, size, f"turn {round_}")
                    page.context.close()
            browser.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,10000", help="session sizes, in events")
    parser.add_argument("--runs", type=int, default=5, help="rounds to take the median of")
    parser.add_argument("--quick", action="store_true", help="sizes 20,200 and 2 rounds")
    args = parser.parse_args()
    sizes = [20, 200] if args.quick else [int(s) for s in args.sizes.split(",")]
    runs = 2 if args.quick else args.runs
    if runs < 1 or len(sizes) < 1 or min(sizes) < 1:
        parser.error("--runs and every size must be at least 1")
    if not CHROMIUM.exists():
        sys.exit(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    print(f"Python {sys.version.split()[0]} on {os.cpu_count()} CPUs; Chromium {CHROMIUM}")
    report(measure(sizes, runs), sizes, runs)


def report(figures: dict[str, dict[int, Any]], sizes: list[int], runs: int) -> None:
    small, large = sizes[0], sizes[-1]
    rows = [
        ("open: newest row shown, page idle (median)", "open", statistics.median, "open"),
        ("open: newest row shown (median)", "row", statistics.median, None),
        ("open: first, server not warm (1 run)", "first open", None, None),
        ("new turn: event sent -> row shown (median)", "turn", statistics.median, "turn"),
        ("new turn: event sent -> row shown (worst)", "turn", max, "turn"),
    ]
    print(
        f"web timeline: {runs} rounds; new turn: {TURN_EVENTS} events per round "
        f"({TURN_EVENTS * runs} per size); milliseconds"
    )
    heads = "".join(f"{f'{size:,} events':>15}" for size in sizes)
    print(f"{'figure':44}{heads}{f'{large:,}/{small:,}':>12}  target")
    for label, key, pick, target in rows:
        values = [
            figures[key][size] if pick is None else pick(figures[key][size]) for size in sizes
        ]
        cells = "".join(f"{value:15.1f}" for value in values)
        ratio = f"{values[-1] / values[0]:.2f}x" if values[0] else "n/a"
        goal = ""
        if target is not None:
            limit = TARGETS_MS[target]
            goal = f"<= {limit:.0f} ms: {'met' if max(values) <= limit else 'NOT met'}"
        print(f"{label:44}{cells}{ratio:>12}  {goal}")


if __name__ == "__main__":
    main()
