"""Runners: the entry point that drives agents and commits their events."""

from cairn.runners.runner import InMemoryRunner, Runner

__all__ = ["InMemoryRunner", "Runner"]
