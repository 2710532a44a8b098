"""What a run runs: the typed ``RunRequest`` and its JSON in ``StoredRun.request``.

The JSON is camelCase, as an HTTP client sends it::

    {"newMessage": <Content JSON> | null, "stateDelta": {...} | null,
     "continuing": bool, "streaming": bool, "customMetadata": {...} | null,
     "rewindBefore": <invocation id> | null}

``continuing``: the run continues its own invocation (the answers to its pause, or a
resume after its process died) instead of starting one. ``rewindBefore``: the run first
rewinds that invocation away (the ``rollback`` strategy's stopped run).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
from typing import Any

from google.genai import types

from cairn.agents.run_config import MultitaskStrategy, RunConfig, StreamingMode
from cairn.events.read_back import reads_back_equal


class _Made:
    """The requests whose JSON ``to_json`` made lately, by the identity of that JSON object
    (held here, so its id is not reused meanwhile); each is taken at most once. Bounded: a
    run submitted here but executed elsewhere, or never, is forgotten in time."""

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._entries: dict[int, tuple[dict[str, Any], RunRequest]] = {}
        self._lock = threading.Lock()  # the sync Runner API runs loops in threads

    def remember(self, data: dict[str, Any], request: RunRequest) -> None:
        with self._lock:
            self._entries[id(data)] = (data, request)
            if len(self._entries) > self.capacity:
                del self._entries[next(iter(self._entries))]

    def take(self, data: dict[str, Any]) -> RunRequest | None:
        with self._lock:
            found = self._entries.get(id(data))
            if found is None or found[0] is not data:
                return None
            del self._entries[id(data)]
            return found[1]


_made = _Made()


@dataclasses.dataclass(frozen=True)
class RunRequest:
    """What to run, as ``execute_run`` reads it."""

    new_message: types.Content | None = None
    state_delta: dict[str, Any] | None = None
    continuing: bool = False
    streaming: bool = False
    custom_metadata: dict[str, Any] | None = None
    rewind_before: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON stored in ``StoredRun.request``."""
        message = (
            None
            if self.new_message is None
            else self.new_message.model_dump(mode="json", by_alias=True, exclude_none=True)
        )
        data = {
            "newMessage": message,
            "stateDelta": self.state_delta,
            "continuing": self.continuing,
            "streaming": self.streaming,
            "customMetadata": self.custom_metadata,
            "rewindBefore": self.rewind_before,
        }
        if self.new_message is None or reads_back_equal(self.new_message):
            _made.remember(data, self)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRequest:
        """Read ``StoredRun.request`` (missing keys take their defaults); ``ValueError``
        naming the key for a value of the wrong kind. The very object ``to_json`` returned
        in this process (a run executed where it was submitted) gives back the request it
        came from, unparsed, when reading it would give an equal one."""
        made = _made.take(data)
        if made is not None:
            return made
        message = data.get("newMessage")
        state_delta = data.get("stateDelta")
        metadata = data.get("customMetadata")
        rewind = data.get("rewindBefore")
        for key, value in (("stateDelta", state_delta), ("customMetadata", metadata)):
            if value is not None and not isinstance(value, dict):
                raise ValueError(f"a run request's {key} must be an object or null, not {value!r}")
        if rewind is not None and not isinstance(rewind, str):
            raise ValueError(
                f"a run request's rewindBefore must be an invocation id, not {rewind!r}"
            )
        return cls(
            new_message=None if message is None else types.Content.model_validate(message),
            state_delta=state_delta,
            continuing=bool(data.get("continuing", False)),
            streaming=bool(data.get("streaming", False)),
            custom_metadata=metadata,
            rewind_before=rewind,
        )

    def run_config(self, strategy: str | None = None) -> RunConfig:
        """The Runner's config for this request (partial events when ``streaming``). A run
        submitted with ``interrupt`` interrupts whatever still holds the session when it
        starts, and answers the calls a stopped run left open; every other run waits for
        the session (its executor already put it in line, or rewound what it stopped)."""
        interrupting = strategy == MultitaskStrategy.INTERRUPT.value
        if self.custom_metadata is None:  # the common case: a copy of one made before
            limit = os.environ.get("ADK_MAX_LLM_CALLS")  # read by RunConfig's default
            return _plain_config(self.streaming, interrupting, limit).model_copy()
        return _config(self.streaming, interrupting, self.custom_metadata)


def _config(streaming: bool, interrupting: bool, metadata: dict[str, Any] | None) -> RunConfig:
    return RunConfig(
        streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE,
        custom_metadata=metadata,
        multitask_strategy=MultitaskStrategy.INTERRUPT if interrupting else None,
    )


@functools.lru_cache(maxsize=16)
def _plain_config(streaming: bool, interrupting: bool, limit: str | None) -> RunConfig:
    """A request's config without custom metadata, made once per kind (``limit``: the
    ``ADK_MAX_LLM_CALLS`` it was made under); ``run_config`` hands out copies."""
    return _config(streaming, interrupting, None)
