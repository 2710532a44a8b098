"""The tools root_agent.yaml names: a function, a tool object and a tool factory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cairn import FunctionTool
from cairn.tools.base_tool import BaseTool
from cairn.tools.tool_configs import ToolArgsConfig

RUNS_ENV = "CAIRN_CFG_DESK_RUNS"


def ran(name: str) -> None:
    """One line per tool run in the file CAIRN_CFG_DESK_RUNS names (counted across
    processes)."""
    path = os.environ.get(RUNS_ENV)
    if path:
        with Path(path).open("a") as file:
            file.write(name + "\n")


def lookup(city: str) -> dict[str, Any]:
    """Opening hours of the museum in a city."""
    ran("lookup")
    return {"city": city, "hours": "9-17"}


def _refund(amount: int) -> dict[str, Any]:
    """Refund an amount to the visitor."""
    ran("refund")
    return {"refunded": amount}


refund = FunctionTool(_refund, require_confirmation=True)
refund.name = "refund"


def make_counter(args: ToolArgsConfig) -> BaseTool:
    """A tool factory: the YAML's args come in as a ToolArgsConfig."""
    label = str((args.model_extra or {})["label"])

    def count(tool_context: Any) -> dict[str, Any]:
        """Counts this visit."""
        seen = int(tool_context.state.get(label, 0)) + 1
        tool_context.state[label] = seen
        return {label: seen}

    return FunctionTool(count)
