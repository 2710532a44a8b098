"""What an invocation left behind, as the Runner that ran it saw it at its end."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from cairn.events.event import Event
from cairn.events.interrupts import Interrupt, pending_interrupts
from cairn.events.read_back import reads_back_equal
from cairn.sessions.scopes import stored_form


class InvocationOutcome:
    """Given to ``Runner.run_async(outcome=...)`` (cairn's): filled in once the invocation
    has yielded its last event, so a caller that stores or reports the run's end
    (``cairn.runs``, the A2A server) need not read the invocation's events back.

    Nothing is set while the invocation has not ended normally: it raised, was cancelled,
    or its caller stopped reading early. Read the log then.
    """

    def __init__(self) -> None:
        self.pending: list[Interrupt] | None = None
        """The invocation's interrupts with no answer, oldest first (``pending_interrupts``
        of its events), as of its end; None until it has ended."""
        self._appended: list[Event] | None = None

    def ended(self, events: Sequence[Event]) -> None:
        """The Runner's: the invocation ended normally with ``events`` (all of its events,
        in log order, as the Runner holds them)."""
        self._appended = [stored_form(event) for event in events]
        self.pending = pending_interrupts(self._appended)

    @functools.cached_property
    def events(self) -> list[Event] | None:
        """The invocation's events equal to what the log holds (``list_invocation_events``),
        or None: it has not ended, or a value in its events would read back from the log
        changed (a tuple, a set or an object where any JSON value may go, ...; see
        ``cairn.events.read_back``). Worked out at the first read."""
        appended = self._appended
        if appended is None or not all(reads_back_equal(event) for event in appended):
            return None
        return appended
