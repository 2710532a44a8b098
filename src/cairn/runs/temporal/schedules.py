"""cairn schedules (``StoredSchedule``: cron, timezone, what to run) as Temporal Schedules.

The schedule's row stays in the run store (what the API lists); Temporal keeps the time and
starts a ``FireScheduleWorkflow`` at each firing, whose activity creates the run and queues
it. One firing starts one run, whichever worker executes it.
"""

from __future__ import annotations

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
)
from temporalio.service import RPCError, RPCStatusCode

from cairn.runs.temporal.messages import RunPolicy, ScheduleFiring, schedule_id_of
from cairn.runs.temporal.schedule_workflow import FireScheduleWorkflow
from cairn.sessions.run_store import StoredSchedule


class TemporalSchedules:
    """Creates and deletes the Temporal Schedules of cairn schedules on one task queue."""

    def __init__(self, client: Client, task_queue: str, policy: RunPolicy | None = None) -> None:
        self.client = client
        self.task_queue = task_queue
        self.policy = policy or RunPolicy()

    async def create(self, schedule: StoredSchedule) -> None:
        """Start firing ``schedule`` (stored already) on its cron, in its timezone."""
        schedule_id = schedule_id_of(
            self.task_queue, schedule.app_name, schedule.user_id, schedule.schedule_id
        )
        firing = ScheduleFiring(
            app_name=schedule.app_name,
            user_id=schedule.user_id,
            schedule_id=schedule.schedule_id,
            task_queue=self.task_queue,
            policy=self.policy,
        )
        await self.client.create_schedule(
            schedule_id,
            Schedule(
                action=ScheduleActionStartWorkflow(
                    FireScheduleWorkflow.run,
                    firing,
                    id=f"{schedule_id}/firing",  # Temporal appends each firing's time
                    task_queue=self.task_queue,
                ),
                spec=ScheduleSpec(
                    cron_expressions=[schedule.cron], time_zone_name=schedule.timezone
                ),
                policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.ALLOW_ALL),
            ),
        )

    async def trigger(self, app_name: str, user_id: str, schedule_id: str) -> None:
        """Fire the schedule now, once (besides its cron)."""
        handle = self.client.get_schedule_handle(
            schedule_id_of(self.task_queue, app_name, user_id, schedule_id)
        )
        await handle.trigger(overlap=ScheduleOverlapPolicy.ALLOW_ALL)

    async def delete(self, app_name: str, user_id: str, schedule_id: str) -> bool:
        """Stop firing it; False if Temporal had no such schedule."""
        handle = self.client.get_schedule_handle(
            schedule_id_of(self.task_queue, app_name, user_id, schedule_id)
        )
        try:
            await handle.delete()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return False
            raise
        return True
