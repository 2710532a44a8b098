"""The cairn weather agent of bench/eval_throughput.py (see agent.py)."""

from . import agent

__all__ = ["agent"]
