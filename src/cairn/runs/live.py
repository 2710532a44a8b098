"""A running run's events, broadcast to any number of listeners in this process.

Each listener gets every event (partial chunks too) from the moment it subscribed, in
order, until the run ends; a listener that falls behind keeps its own backlog and slows
nobody. What happened before a listener subscribed is in the session's log
(``cairn.runs.stream`` reads it from there).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator

from cairn.events.event import Event
from cairn.runners.outcome import InvocationOutcome

RunKey = tuple[str, str, str, str]
"""``(app_name, user_id, session_id, run_id)``."""


@dataclasses.dataclass(frozen=True)
class _End:
    error: BaseException | None
    outcome: InvocationOutcome | None = None


class Subscription(AsyncIterator[Event]):
    """One listener's events: iterate until the run ends. The run's failure (an exception
    in this process) is raised after its last event; a cancelled run just ends."""

    def __init__(self, channel: LiveChannel) -> None:
        self._channel = channel
        self._queue: asyncio.Queue[Event | _End] = asyncio.Queue()
        self._done = False
        self.outcome: InvocationOutcome | None = None
        """Once iterated to its end: the Runner's account of the invocation's end (None
        when it did not end normally in this process)."""

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Event:
        if self._done:
            raise StopAsyncIteration
        item = await self._queue.get()
        if isinstance(item, _End):
            self.close()
            self.outcome = item.outcome
            if item.error is not None:
                raise item.error
            raise StopAsyncIteration
        return item

    def close(self) -> None:
        """Stop listening (the run goes on)."""
        self._done = True
        self._channel.unsubscribe(self)

    def _put(self, item: Event | _End) -> None:
        self._queue.put_nowait(item)


class LiveChannel:
    """The broadcast of one run."""

    def __init__(self) -> None:
        self._listeners: list[Subscription] = []
        self._end_only: list[Subscription] = []
        self._end: _End | None = None
        self.published = 0
        """How many events the run has produced so far."""

    @property
    def ended(self) -> bool:
        return self._end is not None

    def subscribe(self, *, events: bool = True) -> Subscription:
        """A listener from now on (registered at once, before this returns); with
        ``events=False`` it is told only of the end (its iteration yields nothing)."""
        subscription = Subscription(self)
        if self._end is not None:
            subscription._put(self._end)
        else:
            (self._listeners if events else self._end_only).append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        for listeners in (self._listeners, self._end_only):
            if subscription in listeners:
                listeners.remove(subscription)

    def publish(self, event: Event) -> None:
        """Hand ``event`` to every listener."""
        self.published += 1
        for listener in self._listeners:
            listener._put(event)

    def end(
        self, error: BaseException | None = None, outcome: InvocationOutcome | None = None
    ) -> None:
        """The run ended (with ``error``, if it failed here; ``outcome``: how its invocation
        ended): every listener's iteration stops."""
        if self._end is not None:
            return
        self._end = _End(error, outcome)
        for listener in (*self._listeners, *self._end_only):
            listener._put(self._end)
        self._listeners.clear()
        self._end_only.clear()


class LiveRuns:
    """The channels of the runs this process has queued or runs, by run."""

    def __init__(self) -> None:
        self._channels: dict[RunKey, LiveChannel] = {}

    def open(self, key: RunKey) -> LiveChannel:
        """The run's channel, made if it has none (a run queued here)."""
        channel = self._channels.get(key)
        if channel is None or channel.ended:
            channel = self._channels[key] = LiveChannel()
        return channel

    def find(self, key: RunKey) -> LiveChannel | None:
        """The run's channel while it is queued or runs here, else None."""
        channel = self._channels.get(key)
        return None if channel is None or channel.ended else channel

    def end(
        self,
        key: RunKey,
        error: BaseException | None = None,
        outcome: InvocationOutcome | None = None,
    ) -> None:
        """End the run's channel (``outcome``: how its invocation ended) and forget it."""
        channel = self._channels.pop(key, None)
        if channel is not None:
            channel.end(error, outcome)
