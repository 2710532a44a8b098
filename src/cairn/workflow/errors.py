"""Errors a running workflow raises: a node that timed out, a dynamic node that failed."""

from __future__ import annotations

from typing import Any

from cairn.errors import CairnError


class NodeTimeoutError(CairnError, TimeoutError):
    """A node ran longer than its ``timeout`` (ADK's ``NodeTimeoutError``).

    An ordinary exception, so ``retry_config`` retries it; also a ``TimeoutError``, so
    ``RetryConfig(exceptions=["TimeoutError"])`` and ``except TimeoutError`` cover it.
    """

    def __init__(self, *, node_name: str, timeout: float) -> None:
        self.node_name = node_name
        self.timeout = timeout
        super().__init__(
            f"node {node_name!r} timed out after {timeout} seconds; raise its timeout= or "
            "make it faster (its error event is in the log, and retry_config retries it)"
        )


class DynamicNodeFailError(CairnError):
    """A node run with ``ctx.run_node`` failed (its error event is already in the log).

    ``error`` is what the node raised, ``error_node_path`` where (``wf@1/plan@1/step@2``).
    A node that does not catch it fails with ``error`` itself, as in ADK.
    """

    def __init__(self, *, message: str, error: Exception, error_node_path: str) -> None:
        self.error = error
        self.error_node_path = error_node_path
        self.status_code: Any = getattr(error, "status_code", getattr(error, "code", None))
        self.details: Any = getattr(error, "details", None)
        super().__init__(message)


class NodeInterruptedError(BaseException):
    """A node run with ``ctx.run_node`` waits for input, so the node that ran it waits too.

    A ``BaseException`` (as in ADK) so that a node's ``except Exception`` does not swallow
    it: the workflow catches it and the node runs again when the answer comes.
    """
