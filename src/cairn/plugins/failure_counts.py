"""How many times in a row a tool (or a model) failed: read from the log, for the retry plugins.

ADK's retry plugins count failures in memory, so a count is lost when the process stops and
an invocation resumed elsewhere starts again from zero. cairn's count is what the log says:
each retry the plugin gave is an answer recorded in the session with its ``retry_count``,
and the count of a tool is that of its newest answer in scope (zero after a success). So it
survives a restart and is the same in every process. Calls of one turn run concurrently
and their answers are committed together, so failures seen in this process and not yet in
the log are added on top (``InFlight``).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterator

from google.genai import types

from cairn.events.event import Event

REFLECT_AND_RETRY_RESPONSE_TYPE = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"
"""The ``response_type`` of the answers the retry plugins give instead of an error."""

GLOBAL_SCOPE_KEY = "__global_reflect_and_retry_scope__"
MAX_IN_FLIGHT = 1024
"""How many (scope, name) counts a plugin keeps in memory; older ones are in the log."""


class TrackingScope(enum.Enum):
    """What a failure count spans: one invocation (the default), or every invocation of
    the session (``GLOBAL``: in cairn, the session's log, not the whole process)."""

    INVOCATION = "invocation"
    GLOBAL = "global"


def scope_key(scope: TrackingScope, invocation_id: str | None) -> str:
    if scope == TrackingScope.INVOCATION:
        if not invocation_id:
            raise ValueError("a failure count of INVOCATION scope needs the invocation's id")
        return invocation_id
    if scope == TrackingScope.GLOBAL:
        return GLOBAL_SCOPE_KEY
    raise ValueError(f"unknown TrackingScope {scope!r}; use TrackingScope.INVOCATION or GLOBAL")


def in_scope(events: list[Event], scope: TrackingScope, invocation_id: str) -> Iterator[Event]:
    """The events the count reads, newest first."""
    for event in reversed(events):
        if event.partial:
            continue
        if scope == TrackingScope.INVOCATION and event.invocation_id != invocation_id:
            continue
        yield event


def tool_failures(events: list[Event], scope: TrackingScope, invocation_id: str, tool: str) -> int:
    """Failures of ``tool`` in a row, as its newest recorded answer in scope says."""
    for event in in_scope(events, scope, invocation_id):
        for response in reversed(event.get_function_responses()):
            if response.name != tool:
                continue
            answer = response.response or {}
            if answer.get("response_type") != REFLECT_AND_RETRY_RESPONSE_TYPE:
                return 0  # it succeeded since
            return int(answer.get("retry_count") or 0)
    return 0


def model_failures(
    events: list[Event],
    scope: TrackingScope,
    invocation_id: str,
    agent_name: str,
    is_retry: Callable[[types.FunctionCall], bool],
) -> int:
    """Failed model calls of ``agent_name`` in a row, as its newest model reply in scope
    says (a retry the plugin gave carries its count; any other reply is a success)."""
    for event in in_scope(events, scope, invocation_id):
        if event.author != agent_name or event.content is None or event.content.role != "model":
            continue
        for call in event.get_function_calls():
            if is_retry(call):
                return int((call.args or {}).get("retry_count") or 0)
        return 0
    return 0


@dataclasses.dataclass
class InFlight:
    """Failures counted in this process that the log does not hold yet, by (scope, name):
    valid while the log has as many events as when they were counted."""

    counts: dict[tuple[str, str], tuple[int, int]] = dataclasses.field(default_factory=dict)

    def next_count(self, key: tuple[str, str], logged: int, log_length: int) -> int:
        """The count after one more failure, ``logged`` being what the log says."""
        length, extra = self.counts.pop(key, (log_length, 0))
        if length != log_length:
            extra = 0  # what was counted here has been committed since
        self.counts[key] = (log_length, extra + 1)
        while len(self.counts) > MAX_IN_FLIGHT:  # the oldest are long committed
            del self.counts[next(iter(self.counts))]
        return logged + extra + 1

    def forget(self, key: tuple[str, str]) -> None:
        self.counts.pop(key, None)
