"""Errors of code executors."""

from __future__ import annotations

from cairn.errors import CairnError


class CodeExecutorError(CairnError, ValueError):
    """A code executor that cannot be used as configured (the message says how to fix it)."""


class ContainerEngineUnavailableError(CairnError, RuntimeError):
    """No container engine answers where a ``ContainerCodeExecutor`` looks for one."""


__all__ = ["CodeExecutorError", "ContainerEngineUnavailableError"]
