"""Checking, without importing them, that semantic search's optional packages are installed."""

from __future__ import annotations

import importlib.util

from cairn.memory.errors import SemanticSearchUnavailableError


def require(module: str, *, package: str, needed_for: str) -> None:
    """Raise ``SemanticSearchUnavailableError`` unless ``module`` can be imported."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise SemanticSearchUnavailableError(package, needed_for=needed_for)
