"""What a Temporal Schedule starts at each firing of a cairn schedule: one activity that
creates the run (its row) and queues it on its session's workflow."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from cairn.runs.temporal.messages import FIRE_SCHEDULE, SCHEDULE_WORKFLOW, ScheduleFiring


@workflow.defn(name=SCHEDULE_WORKFLOW)
class FireScheduleWorkflow:
    """One firing of a schedule; returns the id of the run it queued (None: the schedule was
    deleted or disabled meanwhile)."""

    @workflow.run
    async def run(self, firing: ScheduleFiring) -> str | None:
        run_id: str | None = await workflow.execute_activity(
            FIRE_SCHEDULE,
            firing,
            result_type=str,
            start_to_close_timeout=timedelta(minutes=1),
            retry_policy=RetryPolicy(
                initial_interval=timedelta(seconds=firing.policy.retry_first),
                maximum_interval=timedelta(seconds=firing.policy.retry_max),
            ),
        )
        return run_id
