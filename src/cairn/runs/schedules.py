"""Cron schedules that start runs.

A schedule (``StoredSchedule``, kept in the ``RunStore``) says when (five cron fields read
in an IANA time zone, daylight saving included) and what to run (a run's request, in one
session or a new session per firing). ``create_schedule`` checks one before it is stored;
``Scheduler`` fires them: it sleeps until the soonest is due, takes each due schedule with
a compare-and-set on its due time (of two schedulers sharing a store, exactly one fires
each due time) and submits its run.

Times follow cronsim (as Debian's cron does): a local time the clock skips when it springs
forward fires right after the jump; a local time that happens twice when it falls back
fires once, the first time; schedules with ``*`` in the hour field fire every real hour.
Firings missed while no scheduler ran are not caught up one by one: the schedule fires
once, then continues from now.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError
from google.genai import types
from pydantic import ValidationError

from cairn.agents.invocation_context import new_invocation_id
from cairn.agents.run_config import MultitaskStrategy
from cairn.errors import InputValidationError
from cairn.runs.executor import RunExecutor
from cairn.runs.webhooks import WebhookSettings, WebhookUrlError, check_webhook_url
from cairn.sessions.ids import check_id
from cairn.sessions.run_store import (
    RunStatus,
    RunStore,
    StoredRun,
    StoredSchedule,
    run_store_for,
)

logger = logging.getLogger("cairn.runs.schedules")

Clock = Callable[[], float]
Submit = Callable[[StoredSchedule], Awaitable[str]]

_REQUEST_KEYS = ("newMessage", "stateDelta", "customMetadata", "streaming")
BROKEN_SCHEDULE_RETRY_SECONDS = 86_400.0
"""How long a schedule whose next time cannot be computed (its zone left the installed
time-zone data) waits before it is tried again."""


class InvalidScheduleError(InputValidationError):
    """A schedule that cannot be stored; ``field`` names the part that is wrong."""

    def __init__(self, field: str, problem: str, fix: str) -> None:
        self.field = field
        super().__init__(f"the schedule's {field} is invalid: {problem}. {fix}")


def zone(timezone: str) -> ZoneInfo:
    """The IANA time zone named ``timezone``; ``InvalidScheduleError`` if there is none."""
    fix = "Give an IANA time zone name such as 'UTC', 'Europe/Berlin' or 'America/New_York'."
    if not isinstance(timezone, str) or not timezone.strip():
        raise InvalidScheduleError("timezone", f"{timezone!r} is not a zone name", fix)
    try:
        return ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidScheduleError("timezone", f"there is no time zone {timezone!r}", fix) from None


def next_fire_time(cron: str, timezone: str, after: float) -> float:
    """The first time (seconds since the epoch) strictly after ``after`` at which ``cron``
    fires, read in ``timezone``. ``InvalidScheduleError`` for a bad expression or zone."""
    tz = zone(timezone)
    fields = cron.split() if isinstance(cron, str) else []
    fix = (
        "Give five fields: minute hour day-of-month month day-of-week, e.g. '0 9 * * 1-5' "
        "(09:00 on weekdays) or '*/15 * * * *' (every 15 minutes)."
    )
    if len(fields) != 5:
        raise InvalidScheduleError("cron", f"{cron!r} has {len(fields)} fields, not 5", fix)
    start = datetime.fromtimestamp(after, tz)
    try:
        return next(CronSim(" ".join(fields), start)).timestamp()
    except CronSimError as exc:
        raise InvalidScheduleError("cron", f"{cron!r}: {str(exc).lower()}", fix) from None
    except StopIteration:  # pragma: no cover - cronsim refuses dates that never come
        raise InvalidScheduleError("cron", f"{cron!r} never fires", fix) from None


def _check_request(request: object) -> dict[str, Any]:
    fix = (
        "Give a run request such as {'newMessage': {'role': 'user', 'parts': [{'text': "
        "'...'}]}}, optionally with stateDelta, customMetadata and streaming."
    )
    if not isinstance(request, Mapping):
        raise InvalidScheduleError("request", f"it is {type(request).__name__}", fix)
    for key in ("continuing", "rewindBefore"):
        if request.get(key):
            raise InvalidScheduleError(
                f"request.{key}", "a schedule starts new invocations only", f"Leave it out. {fix}"
            )
    unknown = sorted(set(request) - {*_REQUEST_KEYS, "continuing", "rewindBefore"})
    if unknown:
        raise InvalidScheduleError("request", f"unknown keys {unknown}", fix)
    message = request.get("newMessage")
    if message is None:
        raise InvalidScheduleError("request.newMessage", "it is missing", fix)
    try:
        content = types.Content.model_validate(message)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        problem = f"{first['msg']}" + (f" at {where}" if where else "")
        raise InvalidScheduleError("request.newMessage", problem, fix) from None
    if not content.parts:
        raise InvalidScheduleError("request.newMessage", "it has no parts", fix)
    for key in ("stateDelta", "customMetadata"):
        if request.get(key) is not None and not isinstance(request[key], Mapping):
            raise InvalidScheduleError(f"request.{key}", "it is not an object", fix)
    return {key: request[key] for key in _REQUEST_KEYS if key in request}


def create_schedule(
    app_name: str,
    user_id: str,
    *,
    cron: str,
    request: Mapping[str, Any],
    timezone: str = "UTC",
    session_id: str | None = None,
    schedule_id: str | None = None,
    strategy: str = MultitaskStrategy.ENQUEUE.value,
    webhook: str | None = None,
    enabled: bool = True,
    metadata: Mapping[str, Any] | None = None,
    now: float | None = None,
    webhook_settings: WebhookSettings | None = None,
) -> StoredSchedule:
    """A checked schedule, due at its first time after ``now``, ready for
    ``RunStore.create_schedule`` (or ``Scheduler.add``). Raises ``InvalidScheduleError``
    naming the field that is wrong and how to fix it (``InvalidIdError`` for a bad id)."""
    check_id("app name", app_name)
    check_id("user id", user_id)
    if session_id is not None:
        check_id("session id", session_id)
    if schedule_id is not None:
        check_id("schedule id", schedule_id)
    created = time.time() if now is None else now
    first = next_fire_time(cron, timezone, created)
    strategies = [s.value for s in MultitaskStrategy]
    if strategy not in strategies:
        raise InvalidScheduleError(
            "strategy", f"{strategy!r} is not a multitask strategy", f"Use one of {strategies}."
        )
    if webhook is not None:
        try:
            check_webhook_url(webhook, webhook_settings)
        except WebhookUrlError as exc:
            raise InvalidScheduleError(
                "webhook", exc.message, "Fix the URL or leave it out."
            ) from None
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InvalidScheduleError("metadata", "it is not an object", "Give a JSON object.")
    return StoredSchedule(
        app_name=app_name,
        user_id=user_id,
        schedule_id=schedule_id or f"sch-{uuid.uuid4()}",
        cron=" ".join(cron.split()),
        timezone=timezone,
        session_id=session_id,
        request=_check_request(request),
        next_run_at=first,
        created_at=created,
        enabled=enabled,
        strategy=strategy,
        webhook=webhook,
        metadata=dict(metadata or {}),
    )


@dataclasses.dataclass(frozen=True)
class Firing:
    """One due time this scheduler fired: the ``schedule`` as it was due (its
    ``next_run_at`` is the time fired), the run submitted, or why none was."""

    schedule: StoredSchedule
    next_run_at: float
    run_id: str | None = None
    error: str | None = None


class Scheduler:
    """Fires the due schedules of ``store`` by calling ``submit(schedule) -> run_id``.

    Run it with ``async with Scheduler(...)`` (or ``start``/``close``), or call
    ``fire_due`` yourself. ``clock`` says what time it is (seconds since the epoch);
    the loop sleeps until the soonest schedule is due, at most ``max_sleep`` seconds, and
    sooner when ``add``, ``remove`` or ``wake`` is called in this process (a schedule
    created by another process is seen within ``max_sleep``)."""

    def __init__(
        self,
        store: RunStore,
        submit: Submit,
        *,
        clock: Clock = time.time,
        max_sleep: float = 30.0,
        retry_delay: float = 5.0,
        batch: int = 100,
    ) -> None:
        if max_sleep <= 0 or retry_delay <= 0 or batch < 1:
            raise ValueError("max_sleep and retry_delay must be positive, batch at least 1")
        self.store = store
        self.submit = submit
        self.clock = clock
        self.max_sleep = max_sleep
        self.retry_delay = retry_delay
        self.batch = batch
        self._woken = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def add(self, schedule: StoredSchedule) -> StoredSchedule:
        """Store ``schedule`` (from ``create_schedule``) and wake the loop."""
        stored = await self.store.create_schedule(schedule)
        self.wake()
        return stored

    async def remove(self, app_name: str, user_id: str, schedule_id: str) -> bool:
        """Delete the schedule (False if there was none) and wake the loop."""
        removed = await self.store.delete_schedule(app_name, user_id, schedule_id)
        self.wake()
        return removed

    def wake(self) -> None:
        """Look at the schedules again now (one was created or deleted, or time moved)."""
        self._woken.set()

    async def fire_due(self) -> list[Firing]:
        """Fire every schedule due now (``clock()``), each due time once across all
        schedulers of the store; return what this one fired."""
        now = self.clock()
        fired: list[Firing] = []
        for schedule in await self.store.due_schedules(now, limit=self.batch):
            firing = await self._fire(schedule, now)
            if firing is not None:
                fired.append(firing)
        return fired

    async def _fire(self, schedule: StoredSchedule, now: float) -> Firing | None:
        try:
            next_at = next_fire_time(schedule.cron, schedule.timezone, now)
        except InvalidScheduleError as exc:
            logger.error(
                "schedule %s of user %s in app %s cannot fire: %s",
                schedule.schedule_id,
                schedule.user_id,
                schedule.app_name,
                exc,
            )
            next_at = now + BROKEN_SCHEDULE_RETRY_SECONDS
            await self.store.advance_schedule(
                schedule, next_run_at=next_at, last_run_id=schedule.last_run_id
            )
            return None
        taken = await self.store.advance_schedule(
            schedule, next_run_at=next_at, last_run_id=schedule.last_run_id
        )
        if not taken:
            return None  # another scheduler fired this due time
        try:
            run_id = await self.submit(schedule)
        except Exception as exc:
            logger.exception(
                "schedule %s of user %s in app %s: its run could not be submitted",
                schedule.schedule_id,
                schedule.user_id,
                schedule.app_name,
            )
            return Firing(schedule, next_at, error=f"{type(exc).__name__}: {exc}")
        advanced = dataclasses.replace(schedule, next_run_at=next_at)
        await self.store.advance_schedule(advanced, next_run_at=next_at, last_run_id=run_id)
        return Firing(schedule, next_at, run_id=run_id)

    async def _delay(self) -> float:
        """Seconds until the soonest schedule is due (at most ``max_sleep``)."""
        now = self.clock()
        soonest = await self.store.due_schedules(now + self.max_sleep, limit=1)
        if not soonest:
            return self.max_sleep
        return max(0.0, min(self.max_sleep, soonest[0].next_run_at - now))

    async def run(self) -> None:
        """Fire schedules until cancelled."""
        while True:
            self._woken.clear()
            try:
                await self.fire_due()
                delay = await self._delay()
            except Exception:
                logger.exception("the scheduler could not read its schedules; trying again")
                delay = self.retry_delay
            if delay <= 0:
                await asyncio.sleep(0)  # more are due: fire them, letting others run first
                continue
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a
            # cancellation that lands as the wake-up does, and the loop would never stop.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._woken.wait()

    async def start(self) -> None:
        """Run the loop in a task of the current event loop."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self.run(), name="cairn-scheduler")

    async def close(self) -> None:
        """Stop the loop (a firing in progress is cancelled with it)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def __aenter__(self) -> Scheduler:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


def schedule_submitter(session_service: Any, executor: RunExecutor) -> Submit:
    """A ``submit`` for ``Scheduler``: stores the schedule's run (in its session, or in a
    new session of the schedule's user for each firing) and hands it to ``executor``.
    The run's ``metadata`` is the schedule's, with ``scheduleId`` added."""
    store = run_store_for(session_service)

    async def submit(schedule: StoredSchedule) -> str:
        session_id = schedule.session_id
        if session_id is None:
            session = await session_service.create_session(
                app_name=schedule.app_name, user_id=schedule.user_id
            )
            session_id = session.id
        run = StoredRun(
            app_name=schedule.app_name,
            user_id=schedule.user_id,
            session_id=session_id,
            run_id=new_invocation_id(),
            seq=0,
            status=RunStatus.PENDING,
            strategy=schedule.strategy,
            request={"continuing": False, **schedule.request},
            created_at=time.time(),
            webhook=schedule.webhook,
            metadata={**schedule.metadata, "scheduleId": schedule.schedule_id},
        )
        stored = await store.create_run(run)
        await executor.submit(stored)
        return stored.run_id

    return submit


__all__ = [
    "BROKEN_SCHEDULE_RETRY_SECONDS",
    "Firing",
    "InvalidScheduleError",
    "Scheduler",
    "create_schedule",
    "next_fire_time",
    "schedule_submitter",
    "zone",
]
