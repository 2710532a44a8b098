"""A run's events for a reader who joins at any time, in any process.

The committed events come from the session's log (after the last one the reader has,
``after``), then the live channel when this process runs the run (partial chunks too),
else the log again, read with a growing pause until the run's row says it has ended or
paused. An event is never given twice (by id), and none is missed: the live channel is
subscribed before the log is read. What is read from the log is what the Runner gives its
caller: records of the runtime's own side effects (``is_record_event``) are left out there
too, so a run reads the same live and from the log.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable

from cairn.events.event import Event
from cairn.events.interrupts import is_record_event
from cairn.runs.executor import RunExecutor
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.run_store import RunStore, StoredRun

FIRST_POLL = 0.05
MAX_POLL = 1.0
"""Seconds between reads of the log when the run executes elsewhere (growing, bounded)."""


async def run_events(
    sessions: BaseSessionService,
    store: RunStore,
    executor: RunExecutor,
    run: StoredRun,
    *,
    after: str | None = None,
) -> AsyncIterator[Event]:
    """The run's events after the event id ``after`` (None: all) until it ends or pauses.
    An ``after`` the run's log does not have is ignored (everything is given)."""
    live = executor.live(run)
    seen: set[str] = set()
    try:
        committed = await _committed(sessions, run)
        seen.update(_through(committed, after))
        for event in committed:
            if event.id not in seen:
                seen.add(event.id)
                if not is_record_event(event):
                    yield event
        if live is not None:
            async for event in _live_after(live, seen):
                yield event
            return
        pause = FIRST_POLL
        while True:
            row = await store.get_run(*run.key, run.run_id)
            for event in await _committed(sessions, run):
                if event.id not in seen:
                    seen.add(event.id)
                    if not is_record_event(event):
                        yield event
            if row is None or not row.status.active:
                return
            await asyncio.sleep(pause)
            pause = min(pause * 2, MAX_POLL)
    finally:
        close = getattr(live, "close", None)
        if close is not None:
            close()


async def _committed(sessions: BaseSessionService, run: StoredRun) -> list[Event]:
    return await sessions.list_invocation_events(
        app_name=run.app_name,
        user_id=run.user_id,
        session_id=run.session_id,
        invocation_id=run.run_id,
    )


def _through(events: list[Event], after: str | None) -> Iterable[str]:
    """The ids up to and including ``after`` (none when the log does not have it)."""
    ids = [event.id for event in events]
    if after is None or after not in ids:
        return ()
    return ids[: ids.index(after) + 1]


async def _live_after(live: AsyncIterator[Event], seen: set[str]) -> AsyncIterator[Event]:
    """The live events not read from the log. Partial chunks that came before the first
    whole event may belong to an event the log already gave: they are left out."""
    caught_up = False
    try:
        async for event in live:
            if event.partial:
                if caught_up:
                    yield event
                continue
            caught_up = True
            if event.id not in seen:
                seen.add(event.id)
                yield event
    except Exception:
        return  # the run failed: its row says how
