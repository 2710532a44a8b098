"""The dev server's evaluation routes (ADK's paths and JSON), against a real app folder.

The app is a copy of ``tests/support/eval_agents/forecast`` in a temporary folder, so eval sets and
results are written beside it as ADK keeps them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.harness import asgi_client, run_body

from cairn.server import Principal

FORECAST = Path(__file__).resolve().parents[1] / "support" / "eval_agents" / "forecast"
DEV = "/dev/apps/forecast"
DEFAULT_METRICS = {
    "evalMetrics": [
        {"metricName": "tool_trajectory_avg_score", "threshold": 1.0},
        {"metricName": "response_match_score", "threshold": 0.8},
    ]
}


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    shutil.copytree(FORECAST, tmp_path / "forecast")
    return tmp_path


@pytest.fixture
async def dev(agents: Path) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(agents_dir=agents, web=True) as client:
        yield client


async def recorded_session(api: httpx.AsyncClient, session_id: str, city: str) -> None:
    created = await api.post(
        "/apps/forecast/users/ada/sessions", json={"sessionId": session_id, "state": {"u": 1}}
    )
    assert created.status_code == 200, created.text
    ran = await api.post("/run", json=run_body("forecast", session_id, f"weather in {city}"))
    assert ran.status_code == 200, ran.text


async def new_set(api: httpx.AsyncClient, eval_set_id: str = "smoke") -> None:
    body = {"evalSet": {"eval_set_id": eval_set_id, "eval_cases": []}}
    created = await api.post(f"{DEV}/eval-sets", json=body)
    assert created.status_code == 200, created.text


async def add(api: httpx.AsyncClient, eval_id: str, session_id: str, set_id: str = "smoke") -> Any:
    body = {"evalId": eval_id, "sessionId": session_id, "userId": "ada"}
    return await api.post(f"{DEV}/eval-sets/{set_id}/add-session", json=body)


async def test_eval_routes_are_served_only_with_the_dev_ui(agents: Path) -> None:
    async with asgi_client(agents_dir=agents) as api:
        assert (await api.get(f"{DEV}/eval-sets")).status_code == 404


async def test_an_eval_set_is_created_listed_and_written_beside_the_agent(
    dev: httpx.AsyncClient, agents: Path
) -> None:
    assert (await dev.get(f"{DEV}/eval-sets")).json() == {"evalSetIds": []}
    body = {"evalSet": {"eval_set_id": "smoke", "eval_cases": []}}
    created = await dev.post(f"{DEV}/eval-sets", json=body)
    assert created.status_code == 200
    assert created.json()["eval_set_id"] == "smoke"
    assert created.json()["eval_cases"] == []
    assert (agents / "forecast" / "smoke.evalset.json").is_file()
    await dev.post(f"{DEV}/eval_sets/another")  # ADK's deprecated form
    assert (await dev.get(f"{DEV}/eval-sets")).json() == {"evalSetIds": ["another", "smoke"]}
    assert (await dev.get(f"{DEV}/eval_sets")).json() == ["another", "smoke"]


async def test_creating_a_taken_or_malformed_eval_set_is_refused(dev: httpx.AsyncClient) -> None:
    await new_set(dev)
    taken = await dev.post(
        f"{DEV}/eval-sets", json={"evalSet": {"eval_set_id": "smoke", "eval_cases": []}}
    )
    assert taken.status_code == 409
    assert "already has an eval set 'smoke'" in taken.json()["detail"]
    bad = await dev.post(
        f"{DEV}/eval-sets", json={"evalSet": {"eval_set_id": "a b", "eval_cases": []}}
    )
    assert bad.status_code == 422
    assert "'a b'" in bad.json()["detail"]
    missing = await dev.post(f"{DEV}/eval-sets", json={"evalSet": {}})
    assert missing.status_code == 422
    unknown_app = await dev.get("/dev/apps/nowhere/eval-sets")
    assert unknown_app.status_code == 404
    assert "'nowhere'" in unknown_app.json()["detail"]


async def test_a_session_becomes_an_eval_case_with_its_turns_and_initial_state(
    dev: httpx.AsyncClient,
) -> None:
    await recorded_session(dev, "s1", "Paris")
    await new_set(dev)
    added = await add(dev, "paris", "s1")
    assert added.status_code == 200 and added.json() is None
    assert (await dev.get(f"{DEV}/eval_sets/smoke/evals")).json() == ["paris"]
    case = (await dev.get(f"{DEV}/eval-sets/smoke/eval-cases/paris")).json()
    assert case["evalId"] == "paris"
    assert case["sessionInput"] == {"appName": "forecast", "userId": "ada", "state": {"u": 1}}
    [turn] = case["conversation"]
    assert turn["userContent"]["parts"] == [{"text": "weather in Paris"}]
    assert turn["finalResponse"]["parts"] == [{"text": "It is sunny in Paris."}]
    calls = [
        part["functionCall"]
        for event in turn["intermediateData"]["invocationEvents"]
        for part in event.get("content", {}).get("parts", [])
        if "functionCall" in part
    ]
    assert [(c["name"], c["args"]) for c in calls] == [("weather", {"city": "Paris"})]
    legacy = await dev.get(f"{DEV}/eval_sets/smoke/evals/paris")
    assert legacy.json() == case


async def test_adding_a_session_names_what_is_missing_or_taken(dev: httpx.AsyncClient) -> None:
    await recorded_session(dev, "s1", "Paris")
    no_set = await add(dev, "paris", "s1", set_id="nope")
    assert no_set.status_code == 404 and "no eval set 'nope'" in no_set.json()["detail"]
    await new_set(dev)
    no_session = await add(dev, "paris", "ghost")
    assert no_session.status_code == 404 and "'ghost'" in no_session.json()["detail"]
    assert (await add(dev, "paris", "s1")).status_code == 200
    taken = await add(dev, "paris", "s1")
    assert taken.status_code == 409 and "'paris'" in taken.json()["detail"]
    await dev.post("/apps/forecast/users/ada/sessions", json={"sessionId": "quiet"})
    silent = await add(dev, "quiet", "quiet")
    assert silent.status_code == 422 and "no user turn" in silent.json()["detail"]
    empty_id = await add(dev, " ", "s1")
    assert empty_id.status_code == 422
    no_body = await dev.post(f"{DEV}/eval-sets/smoke/add-session", json={"evalId": "x"})
    assert no_body.status_code == 422


async def test_an_eval_case_is_replaced_and_deleted(dev: httpx.AsyncClient) -> None:
    await recorded_session(dev, "s1", "Paris")
    await new_set(dev)
    await add(dev, "paris", "s1")
    path = f"{DEV}/eval-sets/smoke/eval-cases/paris"
    case = (await dev.get(path)).json()
    case["conversation"][0]["finalResponse"]["parts"] = [{"text": "Rain."}]
    replaced = await dev.put(path, json=case)
    assert replaced.status_code == 200, replaced.text
    stored = (await dev.get(path)).json()
    assert stored["conversation"][0]["finalResponse"]["parts"] == [{"text": "Rain."}]
    renamed = await dev.put(path, json={**case, "evalId": "other"})
    assert renamed.status_code == 422 and "'other'" in renamed.json()["detail"]
    malformed = await dev.put(path, json={"conversation": "no"})
    assert malformed.status_code == 422 and "conversation" in malformed.json()["detail"]
    gone = await dev.put(f"{DEV}/eval-sets/smoke/eval-cases/rome", json=case | {"evalId": "rome"})
    assert gone.status_code == 404 and "no eval case 'rome'" in gone.json()["detail"]
    assert (await dev.delete(path)).status_code == 200
    assert (await dev.get(path)).status_code == 404
    again = await dev.delete(path)
    assert again.status_code == 404 and "'paris'" in again.json()["detail"]
    assert (await dev.get(f"{DEV}/eval-sets/none/eval-cases/paris")).status_code == 404


async def test_a_run_that_follows_the_recording_passes_with_no_divergence(
    dev: httpx.AsyncClient,
) -> None:
    await recorded_session(dev, "s1", "Paris")
    await new_set(dev)
    await add(dev, "paris", "s1")
    ran = await dev.post(f"{DEV}/eval-sets/smoke/run", json=DEFAULT_METRICS)
    assert ran.status_code == 200, ran.text
    [result] = ran.json()["runEvalResults"]
    assert result["evalId"] == "paris" and result["evalSetId"] == "smoke"
    assert result["finalEvalStatus"] == 1  # PASSED
    assert result["divergence"] is None
    scores = {
        m["metricName"]: (m.get("score"), m["evalStatus"])
        for m in result["overallEvalMetricResults"]
    }
    assert scores["tool_trajectory_avg_score"] == (1.0, 1)
    assert scores["response_match_score"] == (1.0, 1)
    assert scores["tool_call_count_v1"] == (1.0, 4)  # efficiency metrics are always added
    [per] = result["evalMetricResultPerInvocation"]
    assert per["expectedInvocation"]["finalResponse"]["parts"] == [
        {"text": "It is sunny in Paris."}
    ]
    assert per["actualInvocation"]["finalResponse"]["parts"] == [{"text": "It is sunny in Paris."}]
    # The case ran in a new session of the server's store, listed with the user's sessions.
    sessions = (await dev.get("/apps/forecast/users/ada/sessions")).json()
    assert result["sessionId"] in {s["id"] for s in sessions} - {"s1"}
    assert result["userId"] == "ada"


async def test_a_run_may_answer_tool_calls_from_the_recording(
    dev: httpx.AsyncClient, agents: Path
) -> None:
    await recorded_session(dev, "s1", "Paris")
    await new_set(dev)
    await add(dev, "paris", "s1")
    (agents / "forecast" / "sky.txt").write_text("rainy")  # the live tool now says otherwise
    live = await dev.post(f"{DEV}/eval-sets/smoke/run", json=DEFAULT_METRICS)
    [result] = live.json()["runEvalResults"]
    [per] = result["evalMetricResultPerInvocation"]
    assert per["actualInvocation"]["finalResponse"]["parts"] == [{"text": "It is rainy in Paris."}]
    replayed = await dev.post(
        f"{DEV}/eval-sets/smoke/run", json={**DEFAULT_METRICS, "reuseToolResults": True}
    )
    [result] = replayed.json()["runEvalResults"]
    [per] = result["evalMetricResultPerInvocation"]
    assert per["actualInvocation"]["finalResponse"]["parts"] == [{"text": "It is sunny in Paris."}]
    assert result["finalEvalStatus"] == 1 and result["divergence"] is None


async def test_a_run_that_departs_from_the_recording_fails_and_says_where(
    dev: httpx.AsyncClient, agents: Path
) -> None:
    await recorded_session(dev, "s1", "Paris")
    await new_set(dev)
    await add(dev, "paris", "s1")
    (agents / "forecast" / "city.txt").write_text("Rome")
    ran = await dev.post(f"{DEV}/eval-sets/smoke/run", json=DEFAULT_METRICS)
    [result] = ran.json()["runEvalResults"]
    assert result["finalEvalStatus"] == 2  # FAILED
    assert result["divergence"] == {
        "invocationIndex": 0,
        "eventIndex": 0,
        "kind": "tool_call",
        "expected": "weather(city='Paris')",
        "actual": "weather(city='Rome')",
        "description": "invocation 1, event 1: expected weather(city='Paris'), got "
        "weather(city='Rome')",
    }
    scores = {m["metricName"]: m["evalStatus"] for m in result["overallEvalMetricResults"]}
    assert scores["tool_trajectory_avg_score"] == 2


async def test_chosen_cases_run_alone_and_thresholds_come_from_the_request(
    dev: httpx.AsyncClient,
) -> None:
    await recorded_session(dev, "s1", "Paris")
    await recorded_session(dev, "s2", "Oslo")
    await new_set(dev)
    await add(dev, "paris", "s1")
    await add(dev, "oslo", "s2")
    # The expected answer of "oslo" is edited: its response now half matches (ROUGE-1).
    path = f"{DEV}/eval-sets/smoke/eval-cases/oslo"
    case = (await dev.get(path)).json()
    case["conversation"][0]["finalResponse"]["parts"] = [{"text": "It is rainy in Oslo."}]
    await dev.put(path, json=case)
    lenient = {
        "evalCaseIds": ["oslo"],
        "evalMetrics": [{"metricName": "response_match_score", "threshold": 0.5}],
    }
    [result] = (await dev.post(f"{DEV}/eval-sets/smoke/run", json=lenient)).json()["runEvalResults"]
    assert result["evalId"] == "oslo"
    [score] = [
        m for m in result["overallEvalMetricResults"] if m["metricName"] == "response_match_score"
    ]
    # 4 of the 5 words match on each side: F1 = 0.8.
    assert score["score"] == pytest.approx(0.8) and score["evalStatus"] == 1
    assert result["finalEvalStatus"] == 1
    assert result["divergence"]["kind"] == "final_response"
    assert result["divergence"]["description"] == (
        "invocation 1, final response: expected 'It is rainy in Oslo.', got 'It is sunny in Oslo.'"
    )
    strict = {
        "evalIds": ["oslo"],
        "evalMetrics": [{"metricName": "response_match_score", "threshold": 0.9}],
    }
    legacy = await dev.post(f"{DEV}/eval_sets/smoke/run_eval", json=strict)
    [result] = legacy.json()
    assert result["evalId"] == "oslo" and result["finalEvalStatus"] == 2


async def test_a_bad_run_request_is_refused_before_anything_runs(dev: httpx.AsyncClient) -> None:
    await recorded_session(dev, "s1", "Paris")
    await new_set(dev, "empty")
    empty = await dev.post(f"{DEV}/eval-sets/empty/run", json=DEFAULT_METRICS)
    assert empty.status_code == 422 and "no eval cases" in empty.json()["detail"]
    await new_set(dev)
    await add(dev, "paris", "s1")
    before = len((await dev.get("/apps/forecast/users/ada/sessions")).json())
    no_set = await dev.post(f"{DEV}/eval-sets/nope/run", json=DEFAULT_METRICS)
    assert no_set.status_code == 404 and "'nope'" in no_set.json()["detail"]
    no_case = await dev.post(
        f"{DEV}/eval-sets/smoke/run", json={**DEFAULT_METRICS, "evalCaseIds": ["rome"]}
    )
    assert no_case.status_code == 404 and "no eval case 'rome'" in no_case.json()["detail"]
    metric = {"evalMetrics": [{"metricName": "vibes", "threshold": 0.5}]}
    unknown = await dev.post(f"{DEV}/eval-sets/smoke/run", json=metric)
    assert unknown.status_code == 422 and "'vibes'" in unknown.json()["detail"]
    high = {"evalMetrics": [{"metricName": "response_match_score", "threshold": 3}]}
    too_high = await dev.post(f"{DEV}/eval-sets/smoke/run", json=high)
    assert too_high.status_code == 422 and "between 0 and 1" in too_high.json()["detail"]
    live = {**DEFAULT_METRICS, "liveModelConfig": {"timeoutSeconds": 5}}
    assert (await dev.post(f"{DEV}/eval-sets/smoke/run", json=live)).status_code == 422
    simulator = {**DEFAULT_METRICS, "userSimulatorConfig": {"type": "telepathy"}}
    bad_simulator = await dev.post(f"{DEV}/eval-sets/smoke/run", json=simulator)
    assert bad_simulator.status_code == 422
    assert "userSimulatorConfig" in bad_simulator.json()["detail"]
    assert (await dev.post(f"{DEV}/eval-sets/smoke/run", json={})).status_code == 422
    after = len((await dev.get("/apps/forecast/users/ada/sessions")).json())
    assert after == before  # nothing ran


async def test_each_run_is_saved_as_an_eval_result(dev: httpx.AsyncClient, agents: Path) -> None:
    assert (await dev.get(f"{DEV}/eval-results")).json() == {"evalResultIds": []}
    await recorded_session(dev, "s1", "Paris")
    await new_set(dev)
    await add(dev, "paris", "s1")
    await dev.post(f"{DEV}/eval-sets/smoke/run", json=DEFAULT_METRICS)
    [result_id] = (await dev.get(f"{DEV}/eval-results")).json()["evalResultIds"]
    assert (await dev.get(f"{DEV}/eval_results")).json() == [result_id]
    saved = (await dev.get(f"{DEV}/eval-results/{result_id}")).json()
    assert saved["evalSetResultId"] == result_id and saved["evalSetId"] == "smoke"
    [case] = saved["evalCaseResults"]
    assert case["evalId"] == "paris" and case["finalEvalStatus"] == 1
    history = agents / "forecast" / ".adk" / "eval_history"
    [file] = history.iterdir()
    assert json.loads(file.read_text())["eval_set_result_id"] == result_id
    missing = await dev.get(f"{DEV}/eval-results/forecast_smoke_1")
    assert missing.status_code == 404 and "'forecast_smoke_1'" in missing.json()["detail"]
    assert (await dev.get(f"{DEV}/eval_results/forecast_smoke_1")).status_code == 404


async def test_a_damaged_result_file_is_a_500_without_its_path(
    dev: httpx.AsyncClient, agents: Path
) -> None:
    history = agents / "forecast" / ".adk" / "eval_history"
    history.mkdir(parents=True)
    (history / "broken.evalset_result.json").write_text("{not json")
    failed = await dev.get(f"{DEV}/eval-results/broken")
    assert failed.status_code == 500
    assert str(agents) not in failed.text and "errorId" in failed.json()


async def test_the_metrics_and_the_default_criteria_are_listed(dev: httpx.AsyncClient) -> None:
    infos = (await dev.get(f"{DEV}/metrics-info")).json()["metricsInfo"]
    names = {info["metricName"] for info in infos}
    assert {"tool_trajectory_avg_score", "response_match_score", "tool_call_count_v1"} <= names
    trajectory = next(i for i in infos if i["metricName"] == "tool_trajectory_avg_score")
    assert trajectory["requiresThreshold"] is True
    assert trajectory["metricValueInfo"]["interval"]["maxValue"] == 1.0
    defaults = (await dev.get("/cairn/apps/forecast/eval-metrics")).json()["evalMetrics"]
    assert [(m["metricName"], m["threshold"]) for m in defaults] == [
        ("tool_trajectory_avg_score", 1.0),
        ("response_match_score", 0.8),
    ]
    assert (await dev.get("/dev/apps/nowhere/metrics-info")).status_code == 404


def _header_user(request: Any) -> Principal:
    return Principal(user_id=request.headers.get("X-User"), admin=False)


async def test_a_user_may_make_and_run_cases_only_of_their_own_sessions(agents: Path) -> None:
    async with asgi_client(agents_dir=agents, web=True, hook=_header_user) as api:
        ada, bob = {"X-User": "ada"}, {"X-User": "bob"}
        await api.post("/apps/forecast/users/ada/sessions", json={"sessionId": "s1"}, headers=ada)
        await api.post("/run", json=run_body("forecast", "s1", "weather in Paris"), headers=ada)
        body = {"evalSet": {"eval_set_id": "smoke", "eval_cases": []}}
        await api.post(f"{DEV}/eval-sets", json=body, headers=ada)
        case = {"evalId": "paris", "sessionId": "s1", "userId": "ada"}
        taken = await api.post(f"{DEV}/eval-sets/smoke/add-session", json=case, headers=bob)
        assert taken.status_code == 403 and "'ada'" in taken.json()["detail"]
        added = await api.post(f"{DEV}/eval-sets/smoke/add-session", json=case, headers=ada)
        assert added.status_code == 200
        # The case runs as its session's user: only that user (or an admin) may run it.
        refused = await api.post(f"{DEV}/eval-sets/smoke/run", json=DEFAULT_METRICS, headers=bob)
        assert refused.status_code == 403
        ran = await api.post(f"{DEV}/eval-sets/smoke/run", json=DEFAULT_METRICS, headers=ada)
        assert ran.json()["runEvalResults"][0]["finalEvalStatus"] == 1


async def test_the_eval_routes_need_the_servers_credentials_and_are_documented(
    agents: Path,
) -> None:
    async with asgi_client(agents_dir=agents, web=True, api_key="k") as api:
        assert (await api.get(f"{DEV}/eval-sets")).status_code == 401
        assert (await api.get(f"{DEV}/eval-sets", headers={"X-API-Key": "k"})).status_code == 200
        paths = (await api.get("/openapi.json", headers={"X-API-Key": "k"})).json()["paths"]
        assert "/dev/apps/{app_name}/eval-sets/{eval_set_id}/run" in paths
        assert "/dev/apps/{app_name}/metrics-info" in paths


async def test_a_case_whose_run_fails_says_why_and_has_no_divergence(
    dev: httpx.AsyncClient,
) -> None:
    await recorded_session(dev, "s1", "Paris")
    await new_set(dev)
    await add(dev, "paris", "s1")
    path = f"{DEV}/eval-sets/smoke/eval-cases/paris"
    case = (await dev.get(path)).json()
    case["conversation"][0]["userContent"]["parts"] = [{"text": "?"}]  # no city: the agent fails
    await dev.put(path, json=case)
    ran = await dev.post(f"{DEV}/eval-sets/smoke/run", json=DEFAULT_METRICS)
    assert ran.status_code == 200
    [result] = ran.json()["runEvalResults"]
    assert result["finalEvalStatus"] == 2
    assert result["divergence"] is None
    assert result["evalMetricResultPerInvocation"] == []
    assert "IndexError" in result["errorMessage"]


async def test_a_server_of_one_app_folder_keeps_its_eval_sets_in_that_folder(
    agents: Path,
) -> None:
    async with asgi_client(agents_dir=agents / "forecast", web=True) as api:
        body = {"evalSet": {"eval_set_id": "solo", "eval_cases": []}}
        assert (await api.post(f"{DEV}/eval-sets", json=body)).status_code == 200
        assert (agents / "forecast" / "solo.evalset.json").is_file()
        assert (await api.get(f"{DEV}/eval-sets")).json() == {"evalSetIds": ["solo"]}
