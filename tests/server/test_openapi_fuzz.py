"""Schemathesis against the served OpenAPI schema, on a SQLite store: no request, however
odd, gets a 500, and every answer is one the schema declares (status, content type, body
schema; 405 with ``Allow`` for a method a path does not have)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import httpx
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks
from tests.server.harness import AGENTS

from cairn.server import ServerSettings, create_app

STORE = Path(tempfile.mkdtemp(prefix="cairn-openapi-")) / "sessions.db"
app = create_app(ServerSettings(agents_dir=AGENTS, store=str(STORE)))
schema = schemathesis.openapi.from_asgi("/openapi.json", app)

CONFORMANCE = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
    checks.unsupported_method,
]


@schema.parametrize()
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_answer_is_declared_by_the_schema(case: schemathesis.Case) -> None:
    response = case.call_and_validate(checks=CONFORMANCE)
    assert response.headers.get("x-cairn-worker")


SESSION = "/apps/{app_name}/users/{user_id}/sessions/{session_id}"
CAIRN_SESSION = "/cairn" + SESSION
TOURED: set[tuple[str, str]] = set()


def call(
    method: str, path: str, status: int = 200, body: object = None, **params: object
) -> schemathesis.Response:
    """One real request of the tour, validated like the fuzzed ones; its status checked."""
    operation = schema[path][method]
    path_parameters = {k: v for k, v in params.items() if "{" + k + "}" in path}
    query = {k: v for k, v in params.items() if k not in path_parameters}
    case = operation.Case(
        path_parameters=path_parameters,
        query=query,
        **({} if body is None else {"body": body, "media_type": "application/json"}),
    )
    response = case.call_and_validate(checks=CONFORMANCE)
    assert response.status_code == status, (method, path, response.text)
    TOURED.add((method, path))
    return response


def test_real_answers_of_every_route_match_the_schema() -> None:
    """A tour of every route with data that exists (sessions with events, artifacts, an
    interrupt), so that each 200 is checked against its declared model, not only errors."""
    ada = {"user_id": "ada"}
    echo = {"app_name": "echo", **ada}
    s = {**echo, "session_id": "tour"}
    call("GET", "/health")
    call("GET", "/version")
    call("GET", "/list-apps")
    call("GET", "/cairn/apps/{app_name}", app_name="review")
    call("GET", "/cairn/apps/{app_name}", 404, app_name="nope")
    sessions = "/apps/{app_name}/users/{user_id}/sessions"
    call("POST", sessions, body={"sessionId": "tour", "state": {"k": 1}}, **echo)
    call("POST", sessions, 409, body={"sessionId": "tour"}, **echo)
    call("POST", SESSION, body={"a": 1}, **{**echo, "session_id": "other"})
    message = {"appName": "echo", "userId": "ada", "sessionId": "tour"}
    (first, *_) = call(
        "POST", "/run", body={**message, "newMessage": {"parts": [{"text": "save hi"}]}}
    ).json()
    call("POST", "/run", 422, body={**message, "newMessage": {"role": "model", "parts": []}})
    call("POST", "/run_sse", body={**message, "newMessage": {"parts": [{"text": "again"}]}})
    call("GET", sessions, **echo)
    call("GET", SESSION, **s)
    call("PATCH", SESSION, body={"stateDelta": {"x": [1, 2]}}, **s)
    artifacts = SESSION + "/artifacts"
    call("GET", artifacts, **s)
    call("GET", artifacts + "/{artifact_name}", artifact_name="note.txt", **s)
    call("GET", artifacts + "/{artifact_name}/versions", artifact_name="note.txt", **s)
    call(
        "GET",
        artifacts + "/{artifact_name}/versions/{version_id}",
        artifact_name="note.txt",
        version_id=0,
        **s,
    )
    call("DELETE", artifacts + "/{artifact_name}", 200, artifact_name="note.txt", **s)
    call("GET", "/cairn/apps/{app_name}/users/{user_id}/sessions", limit=1, **echo)
    call("GET", CAIRN_SESSION, **s)
    call("GET", CAIRN_SESSION + "/events", limit=1, **s)
    call("GET", CAIRN_SESSION + "/verify", **s)
    call("POST", CAIRN_SESSION + "/fork", body={"newSessionId": "forked"}, **s)
    upload = {"filename": "up.txt", "artifact": {"text": "uploaded"}}
    call("POST", CAIRN_SESSION + "/artifacts", body=upload, **s)
    call("GET", CAIRN_SESSION + "/artifacts", **s)
    call("GET", CAIRN_SESSION + "/invocations/running", **s)
    call("PUT", CAIRN_SESSION + "/name", body={"name": "A tour"}, **s)
    call("POST", CAIRN_SESSION + "/invocations/{invocation_id}/stop", 409, invocation_id="x", **s)
    call("POST", CAIRN_SESSION + "/rewind", body={"invocationId": first["invocationId"]}, **s)
    call("GET", CAIRN_SESSION, rewound=True, **s)
    timeline = call("GET", CAIRN_SESSION + "/timeline", limit=2, **s).json()
    call("GET", CAIRN_SESSION + "/timeline", cursor=timeline["olderCursor"], text="hi", **s)
    call("DELETE", SESSION, 200, **{**echo, "session_id": "other"})
    runs = CAIRN_SESSION + "/runs"
    one_run = runs + "/{run_id}"
    ran = {"run_id": first["invocationId"], **s}  # /run made a run: its id is the invocation's
    call("GET", one_run, **ran)
    call("GET", one_run + "/stream", **ran)
    call("GET", one_run, 404, **{**ran, "run_id": "nope"})
    call("GET", runs, limit=5, **s)
    call("GET", "/cairn/apps/{app_name}/users/{user_id}/runs", **echo)
    started = call("POST", runs, 202, body={"newMessage": {"parts": [{"text": "bg"}]}}, **s)
    call("POST", one_run + "/cancel", **{**s, "run_id": started.json()["runId"]})
    schedules = "/cairn/apps/{app_name}/users/{user_id}/schedules"
    schedule = {"cron": "0 9 * * 1", "request": {"newMessage": {"parts": [{"text": "hi"}]}}}
    made = call("POST", schedules, 201, body={**schedule, "scheduleId": "weekly"}, **echo)
    call("POST", schedules, 409, body={**schedule, "scheduleId": "weekly"}, **echo)
    call("POST", schedules, 422, body={**schedule, "cron": "every day"}, **echo)
    call("GET", schedules, **echo)
    call("GET", schedules + "/{schedule_id}", schedule_id=made.json()["scheduleId"], **echo)
    call("DELETE", schedules + "/{schedule_id}", 204, schedule_id="weekly", **echo)
    call("GET", schedules + "/{schedule_id}", 404, schedule_id="weekly", **echo)

    r = {"app_name": "review", **ada, "session_id": "tour"}
    call("POST", sessions, body={"sessionId": "tour"}, app_name="review", **ada)
    review = {"appName": "review", "userId": "ada", "sessionId": "tour"}
    events = call("POST", "/run", body={**review, "newMessage": {"parts": [{"text": "hi"}]}})
    (interrupt,) = call("GET", CAIRN_SESSION + "/interrupts", **r).json()
    call(
        "GET",
        CAIRN_SESSION + "/invocations/{invocation_id}/nodes",
        invocation_id=events.json()[0]["invocationId"],
        **r,
    )
    node_runs = CAIRN_SESSION + "/invocations/{invocation_id}/nodes/{node_path}"
    invocation = events.json()[0]["invocationId"]
    call("GET", node_runs, invocation_id=invocation, node_path="review@1/draft", **r)
    call("GET", node_runs, 404, invocation_id=invocation, node_path="review@1/nope", **r)
    call(
        "POST",
        CAIRN_SESSION + "/interrupts/{interrupt_id}",
        body={"response": "approve"},
        interrupt_id=interrupt["id"],
        **r,
    )
    # This server records no spans (an api-server's default): the trace routes answer their
    # empty forms; tests/server/test_trace_routes.py reads recorded ones.
    invocation = events.json()[0]["invocationId"]
    call("GET", CAIRN_SESSION + "/traces", limit=5, **r)
    call("GET", CAIRN_SESSION + "/traces/{invocation_id}", 404, invocation_id=invocation, **r)
    call("GET", "/debug/trace/{event_id}", 404, event_id=events.json()[0]["id"])
    call("GET", "/debug/trace/session/{session_id}", session_id="tour")
    every = {
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        for method in operations
    }
    assert every - TOURED == set(), "add the new routes to the tour"


async def test_a_405_allows_every_method_of_its_path(api: httpx.AsyncClient) -> None:
    session = await api.put("/apps/echo/users/ada/sessions/s")
    assert session.status_code == 405
    assert session.headers["allow"] == "GET, POST, PATCH, DELETE"
    assert (await api.get("/run")).headers["allow"] == "POST"
