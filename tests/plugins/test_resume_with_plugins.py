"""What plugins wrote is in the log and is read back on resume, never computed again, in a
new process too: the hooks that ran before a pause do not run again when it is answered."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from tests.plugins.apps import build, noted, user
from tests.plugins.steps import SESSION, USER, in_new_process, run_step

from cairn import Event, Runner
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.sqlite_session_service import SqliteSessionService

PLACES = ["memory", "sqlite", "sqlite-new-process"]


async def drive(place: str, app: str, steps: list[list[str]], tmp: Path) -> list[list[Event]]:
    """Each step's events: all in this process, or each step in a process of its own."""
    log = tmp / "runs.log"
    if place == "sqlite-new-process":
        return [in_new_process(tmp / "sessions.db", app, step, log) for step in steps]
    store = InMemorySessionService() if place == "memory" else SqliteSessionService(tmp / "s.db")
    runner = Runner(app=build(app), session_service=store, auto_create_session=True)
    try:
        return [await run_step(runner, step) for step in steps]
    finally:
        await runner.close()
        await store.close()


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "runs.log"
    monkeypatch.setenv("CAIRN_PLUGIN_LOG", str(path))
    return path


@pytest.mark.parametrize("place", PLACES)
async def test_hooks_that_ran_before_a_confirmation_do_not_run_again(
    place: str, tmp_path: Path, log: Path
) -> None:
    paused, resumed = await drive(place, "confirm", [["say", "go"], ["confirm"]], tmp_path)
    runs = Counter(noted(log))
    # The plugin answered lookup before the pause: its answer is in the log, not recomputed.
    assert runs["before_tool lookup"] == 1
    assert runs["tool lookup"] == 0
    answer = next(
        r.response for e in paused for r in e.get_function_responses() if r.name == "lookup"
    )
    assert answer == {"cached": "answer to weather"}
    # The agent's run spans the pause: its before hook ran once, its after hook at the end.
    assert runs["before_agent clerk"] == 1
    assert runs["after_agent clerk"] == 1
    assert runs["tool pay"] == 1
    assert runs["before_model"] == 2  # one per model call: before the pause, after it
    assert runs["before_run"] == runs["after_run"] == 2  # once per run_async call
    final = resumed[-1]
    assert final.content is not None and final.content.parts[0].text == "done"
    # What the plugin wrote through its contexts is state, from the log.
    written = {k: v for e in paused + resumed for k, v in e.actions.state_delta.items()}
    assert written["agent_started"] == 1
    assert written["lookups_served"] == 1


@pytest.mark.parametrize("place", PLACES)
async def test_a_retry_count_survives_a_restart(place: str, tmp_path: Path, log: Path) -> None:
    paused, resumed = await drive(place, "retry", [["say", "go"], ["confirm"]], tmp_path)
    counts = [
        r.response["retry_count"]
        for e in paused + resumed
        for r in e.get_function_responses()
        if r.name == "flaky" and r.response
    ]
    # The second failure, after the pause (in a new process too), is retry 2 of 3, not 1.
    assert counts == [1, 2]
    assert Counter(noted(log))["tool flaky"] == 2
    assert resumed[-1].content is not None and resumed[-1].content.parts[0].text == "gave up"


async def test_a_committed_event_is_in_the_store_before_the_caller_sees_it(
    tmp_path: Path, log: Path
) -> None:
    store = SqliteSessionService(tmp_path / "s.db")
    runner = Runner(app=build("confirm"), session_service=store, auto_create_session=True)
    async for event in runner.run_async(user_id=USER, session_id=SESSION, new_message=user("go")):
        stored = await store.get_session(app_name=runner.app_name, user_id=USER, session_id=SESSION)
        assert stored is not None
        assert event.id in [e.id for e in stored.events]
        if "agent_started" in event.actions.state_delta:
            assert stored.state["agent_started"] == 1
    await runner.close()
    await store.close()


@pytest.mark.parametrize("place", PLACES)
async def test_a_composed_app_resumes_with_every_plugin(
    place: str, tmp_path: Path, log: Path
) -> None:
    import yaml

    paused, resumed = await drive(place, "composed", [["say", "pay"], ["confirm"]], tmp_path)
    runs = Counter(noted(log))
    # The recorder (after the integrity plugin) answered lookup once, before the pause.
    assert runs["before_tool lookup"] == 1 and runs["tool lookup"] == 0
    assert runs["tool pay"] == 1  # the stamped call verified in the resuming process
    assert runs["before_agent clerk"] == 1 and runs["after_agent clerk"] == 1
    counts = [
        r.response.get("retry_count")
        for e in paused + resumed
        for r in e.get_function_responses()
        if r.name == "flaky" and r.response
    ]
    assert counts == [1, 2]
    assert resumed[-1].content is not None
    assert resumed[-1].content.parts[0].text == "paid, with a fee"
    calls = [e for e in paused if e.get_function_calls()]
    assert all("__adk_internal_fc_hmac" in (e.custom_metadata or {}) for e in calls)
    documents = list(yaml.safe_load_all(Path(str(log) + ".yaml").read_text()))
    assert len(documents) == 2  # one per run_async call: the pause, then the resume
