"""A process killed (SIGKILL) while its agent's code run is under way, after the code ran
and before its result was recorded: the run is in doubt and never silently runs again.

The same rule as tool calls (tests/hitl/test_in_doubt.py): an idempotent executor runs
the code again on resume; any other runs it again only when the caller says so, or not at
all if the caller gives its output. Each step runs in its own process, on SQLite and on
PostgreSQL; the code itself counts its runs in a file.
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


async def crash_in_code(store_url: str, scenario: str, tmp_path: Path) -> Driver:
    driver = Driver(store_url, scenario, "new", tmp_path / "runs.txt")
    crashed = await driver.step({"say": "charge the card"}, CAIRN_HITL_DIE="code", **CRASH)
    assert crashed.killed and runs(tmp_path / "runs.txt") == {"code": 1}
    [code_event] = crashed.events  # the code is in the log; its result is not
    assert code_event.content is not None and code_event.content.parts is not None
    assert code_event.content.parts[-1].executable_code is not None
    return driver


async def test_a_code_run_in_doubt_is_surfaced_and_reruns_only_when_approved(
    store_url: str, tmp_path: Path
) -> None:
    driver = await crash_in_code(store_url, "code_in_doubt", tmp_path)
    [stopped] = (await driver.step({"pending_only": True}, **CRASH)).pending
    assert stopped.kind == "interrupted" and stopped.name == "cairn_code_execution"
    assert stopped.function_call is not None and "charged 30" in str(stopped.function_call.args)
    refused = await driver.step({"say": "hello?"}, **CRASH)
    assert refused.error is not None and refused.error[0] == "InvocationInterruptedError"
    asked = await driver.step({"continue": stopped.invocation_id}, **CRASH)
    [doubt] = asked.pending
    assert doubt.kind == "in_doubt" and doubt.function_call is not None
    assert doubt.function_call.id == stopped.id  # about the run, by its id
    assert runs(tmp_path / "runs.txt") == {"code": 1}  # surfaced, not re-run
    done = await driver.step({"answer": [[doubt.id, doubt.name, {"rerun": True}]]}, **CRASH)
    assert done.error is None and done.pending == []
    assert done.text == "output: Code execution result:\ncharged 30\n\n"
    assert runs(tmp_path / "runs.txt") == {"code": 2}
    results = [
        p.code_execution_result
        for e in done.events
        for p in (e.content.parts if e.content and e.content.parts else [])
        if p.code_execution_result
    ]
    assert [r.id for r in results] == [stopped.id]


async def test_the_caller_may_give_the_runs_output_instead(store_url: str, tmp_path: Path) -> None:
    driver = await crash_in_code(store_url, "code_in_doubt", tmp_path)
    [stopped] = (await driver.step({"pending_only": True}, **CRASH)).pending
    [doubt] = (await driver.step({"continue": stopped.invocation_id}, **CRASH)).pending
    answer = {"result": "charged 30 (checked by hand)"}
    done = await driver.step({"answer": [[doubt.id, doubt.name, answer]]}, **CRASH)
    assert done.text == "output: Code execution result:\ncharged 30 (checked by hand)\n"
    assert runs(tmp_path / "runs.txt") == {"code": 1}  # never ran twice
    later = await driver.step({"say": "thanks"}, **CRASH)
    assert later.error is None


async def test_an_idempotent_executor_simply_runs_the_code_again(
    store_url: str, tmp_path: Path
) -> None:
    driver = await crash_in_code(store_url, "code_idempotent", tmp_path)
    [stopped] = (await driver.step({"pending_only": True}, **CRASH)).pending
    done = await driver.step({"continue": stopped.invocation_id}, **CRASH)
    assert done.pending == [] and done.text.endswith("charged 30\n\n")
    assert runs(tmp_path / "runs.txt") == {"code": 2}
