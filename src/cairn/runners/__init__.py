"""Runners: the entry point that drives agents and commits their events."""

from cairn.agents.run_config import MultitaskStrategy
from cairn.runners.outcome import InvocationOutcome
from cairn.runners.runner import InMemoryRunner, Runner

__all__ = ["InMemoryRunner", "InvocationOutcome", "MultitaskStrategy", "Runner"]
