"""Pauses over HTTP: list what waits, answer it (streamed like /run_sse), node statuses."""

from __future__ import annotations

import json
from typing import Any

import httpx
from tests.server.harness import run_body, sse_payloads

CAIRN = "/cairn/apps/{app}/users/ada/sessions/s"


async def start(api: httpx.AsyncClient, app: str, message: str) -> list[dict[str, Any]]:
    await api.post(f"/apps/{app}/users/ada/sessions", json={"sessionId": "s"})
    response = await api.post("/run", json=run_body(app, "s", message))
    events: list[dict[str, Any]] = response.json()
    return events


async def pending(api: httpx.AsyncClient, app: str) -> list[dict[str, Any]]:
    interrupts: list[dict[str, Any]] = (await api.get(CAIRN.format(app=app) + "/interrupts")).json()
    return interrupts


async def answer(api: httpx.AsyncClient, app: str, interrupt_id: str, body: Any) -> httpx.Response:
    return await api.post(CAIRN.format(app=app) + f"/interrupts/{interrupt_id}", json=body)


async def test_a_tool_confirmation_is_listed_and_answered(api: httpx.AsyncClient) -> None:
    await start(api, "clerk", "refund me")
    (confirmation,) = await pending(api, "clerk")
    assert confirmation["kind"] == "confirmation" and confirmation["name"] == (
        "adk_request_confirmation"
    )
    assert confirmation["functionCall"]["name"] == "refund"
    assert confirmation["functionCall"]["args"] == {"amount": 50}
    refused = await answer(api, "clerk", confirmation["id"], {"response": {"confirm": "yes"}})
    assert refused.status_code == 422 and "confirmed" in refused.json()["detail"]
    response = await answer(api, "clerk", confirmation["id"], {"response": {"confirmed": True}})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [json.loads(p) for p in sse_payloads(response.text)]
    tool_results = [
        part["functionResponse"]
        for event in events
        for part in event.get("content", {}).get("parts", [])
        if "functionResponse" in part
    ]
    assert {"name": "refund", "response": {"refunded": 50}}.items() <= tool_results[0].items()
    assert events[-1]["content"]["parts"][0]["text"].startswith("results: ")
    assert await pending(api, "clerk") == []
    twice = await answer(api, "clerk", confirmation["id"], {"response": {"confirmed": True}})
    assert twice.status_code == 409 and confirmation["id"] in twice.json()["detail"]


async def test_answering_through_run_with_a_function_response_works_too(
    api: httpx.AsyncClient,
) -> None:
    await start(api, "clerk", "refund me")
    (confirmation,) = await pending(api, "clerk")
    reply = {
        "functionResponse": {
            "id": confirmation["id"],
            "name": confirmation["name"],
            "response": {"confirmed": False},
        }
    }
    body = run_body("clerk", "s") | {"newMessage": {"role": "user", "parts": [reply]}}
    events = (await api.post("/run", json=body)).json()
    assert events[-1]["content"]["parts"][0]["text"].startswith("results: ")
    assert await pending(api, "clerk") == []


async def test_the_review_workflow_waits_is_revised_and_approved_over_http(
    api: httpx.AsyncClient,
) -> None:
    first = await start(api, "review", "the report is ready")
    invocation = first[0]["invocationId"]
    (review,) = await pending(api, "review")
    assert review["kind"] == "input"
    assert review["payload"] == {"draft": "Hello team, the report is ready"}
    nodes_url = CAIRN.format(app="review") + f"/invocations/{invocation}/nodes"
    assert (await api.get(nodes_url)).json() == [
        {"path": "review@1", "name": "review", "status": "waiting"},
        {"path": "review@1/draft@1", "name": "draft", "status": "completed"},
        {"path": "review@1/review@1", "name": "review", "status": "waiting"},
    ]
    bad = await answer(api, "review", review["id"], {"response": ""})
    assert bad.status_code == 422 and "still pending" in bad.json()["detail"]
    (review,) = await pending(api, "review")
    revised = await answer(api, "review", review["id"], {"response": "shorter please"})
    assert revised.status_code == 200
    (second_review,) = await pending(api, "review")
    assert second_review["payload"] == {"draft": "Hello team (shorter please)"}
    done = await answer(api, "review", second_review["id"], {"response": "approve"})
    outputs = [json.loads(p).get("output") for p in sse_payloads(done.text)]
    assert "SENT: Hello team (shorter please)" in outputs
    statuses = {n["path"]: n["status"] for n in (await api.get(nodes_url)).json()}
    assert statuses["review@1"] == "completed" and statuses["review@1/send@1"] == "completed"
    assert (await api.get(CAIRN.format(app="review") + "/invocations/e-x/nodes")).status_code == 404


async def test_a_node_s_runs_show_input_output_attempts_and_their_events(
    api: httpx.AsyncClient,
) -> None:
    first = await start(api, "review", "the report is ready")
    invocation = first[0]["invocationId"]
    (review,) = await pending(api, "review")
    await answer(api, "review", review["id"], {"response": "shorter please"})
    (second,) = await pending(api, "review")
    nodes_url = CAIRN.format(app="review") + f"/invocations/{invocation}/nodes"
    draft_runs = (await api.get(nodes_url + "/review@1/draft")).json()
    assert [(r["path"], r["status"], r["attempts"]) for r in draft_runs] == [
        ("review@1/draft@1", "completed", 1),
        ("review@1/draft@2", "completed", 1),
    ]
    assert draft_runs[0]["input"] == "the report is ready"
    assert draft_runs[1]["output"] == second["payload"]["draft"] == "Hello team (shorter please)"
    waiting = (await api.get(nodes_url + "/review@1/review@2")).json()
    assert [(r["path"], r["status"]) for r in waiting] == [("review@1/review@2", "waiting")]
    assert waiting[0]["input"] == "Hello team (shorter please)"  # what draft@2 returned
    assert "durationSeconds" not in waiting[0]  # still waiting: no end yet
    events = (await api.get("/apps/review/users/ada/sessions/s")).json()["events"]
    assert set(waiting[0]["eventIds"]) <= {e["id"] for e in events}
    missing = await api.get(nodes_url + "/review@1/nowhere")
    assert missing.status_code == 404 and "review@1/draft@1" in missing.json()["detail"]
    gone = await api.get(CAIRN.format(app="review") + "/invocations/e-x/nodes/review@1")
    assert gone.status_code == 404 and "e-x" in gone.json()["detail"]


async def test_unknown_interrupts_and_sessions(api: httpx.AsyncClient) -> None:
    await start(api, "review", "hello")
    unknown = await answer(api, "review", "nope", {"response": "approve"})
    assert unknown.status_code == 409 and "'nope'" in unknown.json()["detail"]
    missing = await api.get("/cairn/apps/review/users/ada/sessions/zzz/interrupts")
    assert missing.status_code == 404
    no_field = await answer(api, "review", "nope", {"answer": 1})
    assert no_field.status_code == 422 and no_field.json()["detail"][0]["loc"] == [
        "body",
        "answer",
    ]
