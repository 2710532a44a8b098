"""The nodes of cfg_flow's workflow; each run is recorded in the file $CAIRN_CFG_FLOW_RUNS."""

from __future__ import annotations

import os
from typing import Any

from cairn import Event
from cairn.workflow import RequestInput


def _ran(name: str) -> None:
    path = os.environ.get("CAIRN_CFG_FLOW_RUNS")
    if path:
        with open(path, "a", encoding="utf-8") as runs:
            runs.write(name + "\n")


def intake(node_input: Any) -> str:
    _ran("intake")
    parts = getattr(node_input, "parts", None) or []
    return " ".join(p.text or "" for p in parts) or str(node_input)


def price(node_input: str) -> int:
    _ran("price")
    return 10 * len(node_input.split())


def stock(node_input: str) -> int:
    _ran("stock")
    return 3


def ask_review(node_input: dict[str, int]):  # type: ignore[no-untyped-def]
    _ran("ask_review")
    yield RequestInput(
        interrupt_id="review", message=f"approve or revise? {node_input}", payload=node_input
    )


def decide(node_input: Any) -> Event:
    answer = node_input.get("result") if isinstance(node_input, dict) else node_input
    return Event(output=answer, route="approve" if answer == "approve" else "revise")


def publish(node_input: Any) -> str:
    _ran("publish")
    return f"published ({node_input})"


def notify(node_input: Any) -> str:
    _ran("notify")
    return f"notified: {node_input}"
