"""A process killed (SIGKILL) inside a tool body: the call is in doubt, never silently re-run.

Guarantee 9: a tool declared idempotent runs again on resume (same idempotency
key); any other tool runs again only after the caller approves, or not at all
if the caller supplies its result. Each step runs in its own process, on
SQLite and on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.hitl.driver import Driver
from tests.hitl.scenarios import runs
from tests.support.databases import postgres_database

CRASH = {"CAIRN_HITL_TTL": "1", "CAIRN_HITL_WAIT": "10"}


@pytest.fixture(params=["sqlite", "postgres"])
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "sessions.db")
    else:
        async with postgres_database() as url:  # type: ignore[attr-defined]
            yield url


async def crash_in(store_url: str, scenario: str, tmp_path: Path, tool: str) -> Driver:
    driver = Driver(store_url, scenario, "new", tmp_path / "runs.txt")
    crashed = await driver.step({"say": "go"}, CAIRN_HITL_DIE=tool, **CRASH)
    assert crashed.killed and runs(tmp_path / "runs.txt") == {tool: 1}
    return driver


async def test_a_non_idempotent_call_is_surfaced_and_reruns_only_when_approved(
    store_url: str, tmp_path: Path
) -> None:
    driver = await crash_in(store_url, "in_doubt", tmp_path, "charge")
    listed = await driver.step({"pending_only": True}, **CRASH)
    [stopped] = listed.pending
    assert stopped.kind == "interrupted" and stopped.name == "charge"
    refused = await driver.step({"say": "hello?"}, **CRASH)
    assert refused.error is not None and refused.error[0] == "InvocationInterruptedError"
    assert stopped.invocation_id in refused.error[1]
    asked = await driver.step({"continue": stopped.invocation_id}, **CRASH)
    [doubt] = asked.pending
    assert doubt.kind == "in_doubt" and doubt.function_call.name == "charge"
    assert runs(tmp_path / "runs.txt") == {"charge": 1}  # surfaced, not re-run
    done = await driver.step({"answer": [[doubt.id, doubt.name, {"rerun": True}]]}, **CRASH)
    assert done.error is None and done.pending == []
    key = f"{stopped.invocation_id}:call-charge"
    assert f'"key": "{key}"' in done.text  # the same idempotency key as the first attempt
    assert runs(tmp_path / "runs.txt") == {"charge": 2}


async def test_the_caller_may_supply_the_result_instead(store_url: str, tmp_path: Path) -> None:
    driver = await crash_in(store_url, "in_doubt", tmp_path, "charge")
    [stopped] = (await driver.step({"pending_only": True}, **CRASH)).pending
    [doubt] = (await driver.step({"continue": stopped.invocation_id}, **CRASH)).pending
    result = {"result": {"charged": 30, "receipt": "R-1"}}
    done = await driver.step({"answer": [[doubt.id, doubt.name, result]]}, **CRASH)
    assert '"receipt": "R-1"' in done.text
    assert runs(tmp_path / "runs.txt") == {"charge": 1}  # never ran twice


async def test_an_idempotent_call_simply_runs_again(store_url: str, tmp_path: Path) -> None:
    driver = await crash_in(store_url, "idempotent", tmp_path, "lookup")
    [stopped] = (await driver.step({"pending_only": True}, **CRASH)).pending
    done = await driver.step({"continue": stopped.invocation_id}, **CRASH)
    assert done.pending == [] and '"status": "shipped"' in done.text
    assert runs(tmp_path / "runs.txt") == {"lookup": 2}
