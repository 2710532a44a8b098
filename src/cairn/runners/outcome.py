"""What an invocation left waiting, as the Runner that ran it saw it at its end."""

from __future__ import annotations

from dataclasses import dataclass

from cairn.events.interrupts import Interrupt


@dataclass
class InvocationOutcome:
    """Given to ``Runner.run_async(outcome=...)`` (cairn's): filled in once the invocation
    has yielded its last event, so a caller that stores the run's status (``cairn.runs``)
    need not read the invocation's events back.

    ``pending`` stays None while the invocation has not ended normally: it raised, was
    cancelled, or its caller stopped reading early. Read the log then
    (``Runner.list_pending_interrupts``).
    """

    pending: list[Interrupt] | None = None
    """The invocation's interrupts with no answer, oldest first (``pending_interrupts`` of
    the invocation's events), as of its end."""
