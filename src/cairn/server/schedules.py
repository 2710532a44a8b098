"""A server's cron schedules (``cairn.runs.schedules``), fired where its runs execute.

With the in-process executor, a ``Scheduler`` in the server fires the due schedules of the
store (each due time once across all servers sharing it). With Temporal, each schedule is
also a Temporal Schedule, fired by the Temporal server for the workers (the row stays the
record the routes read).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from cairn.runs.schedules import Scheduler, schedule_submitter
from cairn.runs.service import Runs
from cairn.runs.webhooks import deliver_pending
from cairn.server.errors import NotFoundError
from cairn.sessions.run_store import StoredSchedule

logger = logging.getLogger(__name__)


class ScheduleNotFoundError(NotFoundError):
    """A schedule id the user does not have."""

    def __init__(self, app_name: str, user_id: str, schedule_id: str) -> None:
        self.schedule_id = schedule_id
        super().__init__(
            f"user {user_id!r} of app {app_name!r} has no schedule {schedule_id!r}. List "
            f"them with GET /cairn/apps/{app_name}/users/{user_id}/schedules and use one "
            "of their ids."
        )


class ServerSchedules:
    """Create, read and delete the schedules of ``runs``' store, fired by its executor."""

    def __init__(self, runs: Runs) -> None:
        self.runs = runs
        self.store = runs.store
        self._scheduler: Scheduler | None = None
        self._delivering: asyncio.Task[Any] | None = None

    def _temporal(self) -> Any:
        """The Temporal executor's schedules, or None for the in-process executor."""
        return getattr(self.runs.executor, "schedules", None)

    async def start(self) -> None:
        """Start firing schedules (in-process), and deliver in the background the webhooks
        of runs that ended while their process stopped before delivering them."""
        if self._temporal() is None:
            submit = schedule_submitter(self.runs.sessions, self.runs.executor)
            self._scheduler = Scheduler(self.store, submit)
            await self._scheduler.start()
        self._delivering = asyncio.create_task(self._deliver_pending())

    async def _deliver_pending(self) -> None:
        try:
            await deliver_pending(self.store)
        except Exception:  # the store is unreachable: the next start tries again
            logger.warning("could not deliver the pending webhooks", exc_info=True)

    async def close(self) -> None:
        if self._scheduler is not None:
            await self._scheduler.close()
            self._scheduler = None
        if self._delivering is not None:
            self._delivering.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._delivering

    async def create(self, schedule: StoredSchedule) -> StoredSchedule:
        temporal = self._temporal()
        if self._scheduler is not None:
            return await self._scheduler.add(schedule)
        stored = await self.store.create_schedule(schedule)
        if temporal is not None:
            try:
                await temporal.create(stored)
            except BaseException:
                await self.store.delete_schedule(
                    stored.app_name, stored.user_id, stored.schedule_id
                )
                raise
        return stored

    async def get(self, app_name: str, user_id: str, schedule_id: str) -> StoredSchedule:
        found = await self.store.get_schedule(app_name, user_id, schedule_id)
        if found is None:
            raise ScheduleNotFoundError(app_name, user_id, schedule_id)
        return found

    async def list(self, app_name: str, user_id: str) -> list[StoredSchedule]:
        return await self.store.list_schedules(app_name, user_id)

    async def delete(self, app_name: str, user_id: str, schedule_id: str) -> None:
        temporal = self._temporal()
        if temporal is not None:
            await temporal.delete(app_name, user_id, schedule_id)
        if self._scheduler is not None:
            removed = await self._scheduler.remove(app_name, user_id, schedule_id)
        else:
            removed = await self.store.delete_schedule(app_name, user_id, schedule_id)
        if not removed:
            raise ScheduleNotFoundError(app_name, user_id, schedule_id)


def schedule_json(schedule: StoredSchedule) -> dict[str, Any]:
    """A schedule as the HTTP API shows it (camelCase)."""
    return {
        "appName": schedule.app_name,
        "userId": schedule.user_id,
        "scheduleId": schedule.schedule_id,
        "cron": schedule.cron,
        "timezone": schedule.timezone,
        "sessionId": schedule.session_id,
        "request": schedule.request,
        "nextRunAt": schedule.next_run_at,
        "createdAt": schedule.created_at,
        "enabled": schedule.enabled,
        "strategy": schedule.strategy,
        "webhook": schedule.webhook,
        "lastRunId": schedule.last_run_id,
        "metadata": schedule.metadata,
    }
