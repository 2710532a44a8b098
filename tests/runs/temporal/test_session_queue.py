"""A session's runs on Temporal: what only Temporal does (several workers share a task
queue). What both executors do is in test_executor_contract.py."""

from __future__ import annotations

import pytest
from tests.runs.temporal.harness import Harness, invocation_order

from cairn.sessions.run_store import RunStatus

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_two_workers_share_the_queue_and_keep_each_sessions_order(
    harness: Harness, session_id: str
) -> None:
    sessions = [f"{session_id}-{n}" for n in range(4)]
    async with harness.worker(), harness.worker(own_client=True):
        submitted = {s: [await harness.submit(s) for _ in range(5)] for s in sessions}
        for runs in submitted.values():
            for run in runs:
                assert (await harness.settled(run)).status is RunStatus.DONE
    for session, runs in submitted.items():
        assert invocation_order(await harness.events(session)) == [r.run_id for r in runs]
        for run in runs:
            assert len(await harness.steps("tool", run.run_id)) == 1
