"""The invocations a server runs: each in a task of its own, tracked until it ends.

A response reads an invocation's events as they commit. The client may leave (a
disconnect, a cancelled request) without stopping it: the invocation runs to its end or
its pause with every event committed, and the server's shutdown finds it in the set of
tracked tasks (``ServerContext.invocations``). ``RunningInvocations`` indexes them by
session and invocation id, so that a client can stop one (``Invocation.stop``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncGenerator
from typing import Protocol

from cairn.events.event import Event
from cairn.server.errors import is_client_error, report

SessionKey = tuple[str, str, str]
"""``(app_name, user_id, session_id)``."""


@dataclasses.dataclass(frozen=True)
class Failed:
    """The invocation raised ``error``; nothing after it comes."""

    error: Exception


class Listened(Protocol):
    """What a response reads events from: an ``Invocation``, or a run's ``ForegroundRun``."""

    async def next(self) -> Event | Failed | None: ...

    def detach(self) -> None: ...


async def collect(listened: Listened) -> list[Event]:
    """Every event of ``listened`` until its end; a failure is raised (the events before it
    are stored)."""
    events: list[Event] = []
    try:
        while (item := await listened.next()) is not None:
            if isinstance(item, Failed):
                raise item.error
            events.append(item)
    finally:
        listened.detach()
    return events


class _End:
    pass


_END = _End()


class Invocation:
    """The Runner's events for one request, produced in a tracked task (its telemetry
    context stays in one task) and handed over through a queue while someone listens."""

    def __init__(
        self,
        events: AsyncGenerator[Event, None],
        tracked: set[asyncio.Task[None]],
        running: RunningInvocations | None = None,
        session: SessionKey | None = None,
        *,
        invocation_id: str | None = None,
        user_message_first: bool = False,
    ):
        self._queue: asyncio.Queue[Event | Failed | _End] = asyncio.Queue()
        self._listening = True
        self._running = running
        self._user_message_first = user_message_first
        self.session = session
        self.invocation_id: str | None = None
        """Given (a continued invocation), or known from the first event (the Runner chooses
        it); from then on ``running`` indexes the invocation."""
        if invocation_id is not None:
            self._found(invocation_id)
        self.task = asyncio.create_task(self._run(events))
        tracked.add(self.task)
        self.task.add_done_callback(tracked.discard)

    async def _run(self, events: AsyncGenerator[Event, None]) -> None:
        try:
            async with contextlib.aclosing(events):
                async for event in events:
                    if self.invocation_id is None:
                        self._found(event.invocation_id)
                    if self._user_message_first:
                        self._user_message_first = False
                        if _is_users_message(event):
                            continue  # it named the invocation; clients are not sent it
                    if self._listening:
                        self._queue.put_nowait(event)
        except Exception as error:
            if self._listening:
                self._queue.put_nowait(Failed(error))
            elif not is_client_error(error):
                report(error)  # nobody listens any more: the log is where it goes
        finally:
            if self._running is not None and self.session is not None and self.invocation_id:
                self._running.forget(self.session, self.invocation_id, self)
            self._queue.put_nowait(_END)

    def _found(self, invocation_id: str) -> None:
        self.invocation_id = invocation_id
        if self._running is not None and self.session is not None and invocation_id:
            self._running.add(self.session, invocation_id, self)

    async def stop(self) -> None:
        """Cancel the invocation and wait until it has ended: what it committed stays, and
        nothing more is committed. Its listener's stream ends."""
        self.task.cancel()
        await asyncio.wait([self.task])

    async def next(self) -> Event | Failed | None:
        """The next event, the failure that ended the invocation, or ``None`` at its end."""
        item = await self._queue.get()
        return None if isinstance(item, _End) else item

    async def collect(self) -> list[Event]:
        """Every event until the end; a failure is raised (the events before it are stored)."""
        return await collect(self)

    def detach(self) -> None:
        """Stop listening (the client left, or has all it wants); the invocation goes on."""
        self._listening = False
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if isinstance(item, Failed) and not is_client_error(item.error):
                report(item.error)


def _is_users_message(event: Event) -> bool:
    """The stored user message a Runner yields first with ``yield_user_message=True``: so the
    invocation is known (and can be stopped) while its first model call runs."""
    return event.author == "user" and not event.partial and not event.node_info.path


class RunningInvocations:
    """The invocations this process runs now, by session and invocation id."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, str, str, str], Invocation] = {}

    def add(self, session: SessionKey, invocation_id: str, invocation: Invocation) -> None:
        self._by_key[(*session, invocation_id)] = invocation

    def forget(self, session: SessionKey, invocation_id: str, invocation: Invocation) -> None:
        if self._by_key.get((*session, invocation_id)) is invocation:
            del self._by_key[(*session, invocation_id)]

    def find(self, session: SessionKey, invocation_id: str) -> Invocation | None:
        """The running invocation, or None when this process does not run it."""
        return self._by_key.get((*session, invocation_id))

    def of_session(self, session: SessionKey) -> list[str]:
        """The ids of the session's invocations running in this process."""
        return [key[3] for key in self._by_key if key[:3] == session]
