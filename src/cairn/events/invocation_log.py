"""One invocation's events in its session's log, indexed by workflow node path.

Resuming a workflow asks, for each node run, what the log recorded of it. Reading the
invocation's events once and indexing them by path makes each of those questions cost
what that run wrote, not what the whole invocation wrote: a node that ran 200 dynamic
children resumes without 200 walks over the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cairn.events.event import Event
from cairn.events.interrupts import starts_invocation
from cairn.events.request_input import REQUEST_INPUT_FUNCTION


class InvocationLog:
    """The events of invocation ``invocation_id``, from the message that started it, as
    ``session.events`` holds them; ``update`` folds in what was appended since.

    Positions count from the invocation's first event, so a reader can take the log as it
    stood at some moment (everything before a position) while the invocation goes on.
    """

    def __init__(self, invocation_id: str) -> None:
        self.invocation_id = invocation_id
        self.events: list[Event] = []
        self._source: Sequence[Event] | None = None
        self._seen = 0
        """How many of ``_source``'s events have been looked at."""
        self._at: dict[str, list[tuple[int, Event, bool]]] = {}
        self._first: dict[str, int] = {}
        self._answers: dict[str, list[tuple[int, Any]]] = {}
        self.schemas: dict[str, Any] = {}
        """Input request id -> the JSON schema its answer must match (if it gave one)."""

    def update(self, events: Sequence[Event]) -> InvocationLog:
        """Account for ``events`` (the session's live events); returns ``self``.

        The same list grown by appends costs only the new events; any other list (a
        reloaded session, a filtered view) is read afresh, walking back from its newest
        event to the invocation's start.
        """
        seen = self._seen
        same = events is self._source and seen <= len(events)
        if same and seen and self.events and events[seen - 1] is not self._last_seen:
            same = False
        if not same:
            self._reset()
            self._source = events
            start = len(events)
            for index in range(len(events) - 1, -1, -1):
                event = events[index]
                if event.invocation_id != self.invocation_id:
                    continue
                start = index
                if event.author == "user" and starts_invocation(event):
                    break
            seen = start
        for index in range(seen, len(events)):
            event = events[index]
            if event.invocation_id != self.invocation_id:
                continue
            if event.author == "user" and self.events and starts_invocation(event):
                self._reset()
                self._source = events
            self._add(event)
        self._seen = len(events)
        self._last_seen = events[-1] if events else None
        return self

    def at(self, path: str, before: int) -> list[tuple[Event, bool]]:
        """Events before position ``before`` that are at ``path`` (``True``) or name it in
        ``node_info.output_for`` (``False``), in log order; an event at ``path`` naming it
        too comes twice, as a naming first."""
        return [
            (event, own) for position, event, own in self._at.get(path, ()) if position < before
        ]

    def started(self, path: str, before: int) -> bool:
        """Some event before position ``before`` is at ``path`` or below it."""
        return self._first.get(path, before) < before

    def answers(self, before: int) -> dict[str, Any]:
        """Function responses by call id, given before position ``before`` (the latest)."""
        found: dict[str, Any] = {}
        for call_id, given in self._answers.items():
            for position, response in given:
                if position < before:
                    found[call_id] = response
        return found

    def _reset(self) -> None:
        self.events = []
        self._at = {}
        self._first = {}
        self._answers = {}
        self.schemas = {}

    def _add(self, event: Event) -> None:
        position = len(self.events)
        self.events.append(event)
        if event.content is not None:
            for response in event.get_function_responses():
                if response.id:
                    self._answers.setdefault(response.id, []).append((position, response.response))
            for call in event.get_function_calls():
                if call.name == REQUEST_INPUT_FUNCTION and call.id:
                    args = call.args or {}
                    schema = args.get("response_schema", args.get("responseSchema"))
                    if schema is not None:
                        self.schemas[call.id] = schema
        node_info = event.node_info
        for target in node_info.output_for or ():
            self._at.setdefault(target, []).append((position, event, False))
        path = node_info.path
        self._at.setdefault(path, []).append((position, event, True))
        if not path:
            return
        first = self._first
        if path in first:
            return
        first[path] = position
        # Up the path until a known ancestor: those above it are known already.
        parent = path.rpartition("/")[0]
        while parent and parent not in first:
            first[parent] = position
            parent = parent.rpartition("/")[0]

    _last_seen: Event | None = None
