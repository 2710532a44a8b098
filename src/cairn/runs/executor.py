"""The executor seam: where runs execute.

``InProcessExecutor`` runs them in this process (the default, on any store);
``TemporalExecutor`` hands them to Temporal, whose workers run them. Both execute one
run the same way (``cairn.runs.execute.execute_run``: the unchanged Runner, committing
every event to the session store); they differ only in how runs wait their turn, are
cancelled and are recovered when the process executing them dies.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator

from cairn.errors import CairnError
from cairn.events.event import Event
from cairn.sessions.run_store import CancelRequest, StoredRun


class ExecutorUnavailableError(CairnError, ConnectionError):
    """The executor runs are handed to (a Temporal server) cannot be reached. A run being
    submitted is marked cancelled with this error: it never runs, and nothing dangles.
    The API answers 503; submit again once the executor is back."""


class RunExecutor(abc.ABC):
    """Executes stored runs. The run's row (``RunStore``) is written before ``submit`` and
    says, at any time and to any process, where the run is."""

    name: str
    """``in-process`` or ``temporal``: shown in the API and the dev UI."""

    async def start(self) -> None:  # noqa: B027 - optional: an executor may need no start
        """Begin executing (an in-process executor takes over runs whose process died)."""

    async def close(self) -> None:  # noqa: B027 - optional
        """Stop executing; runs in flight here end as cancelled ones do (what they committed
        stays) and are taken over by the next executor that starts."""

    @abc.abstractmethod
    async def submit(self, run: StoredRun) -> StoredRun:
        """Queue ``run`` (stored, ``pending``) by its strategy: ``enqueue`` after the
        session's runs, ``interrupt``/``rollback`` after stopping the running one,
        ``reject`` only if the session is free (else the run is marked cancelled and
        ``SessionBusyError`` raised). Returns the run's row after queueing."""

    @abc.abstractmethod
    async def cancel(self, run: StoredRun, how: CancelRequest) -> None:
        """Stop ``run``: a pending one never starts; a running one stops at its next event
        boundary, and what it committed stays. Returns once the request is recorded (the
        row says when the run has ended)."""

    def live(self, run: StoredRun, *, events: bool = True) -> AsyncIterator[Event] | None:
        """The run's events as this process produces them (partial chunks too), from now
        until the run ends; None when it does not execute here (a reader then tails the
        log, which has every committed event). ``events=False``: an iteration that yields
        nothing and stops when the run ends (for a caller that waits for the end only)."""
        return None

    def running_here(self, app_name: str, user_id: str, session_id: str) -> list[str]:
        """The ids of the session's runs this process executes now (a new run once its
        message is committed): what ``.../invocations/running`` lists."""
        return []
