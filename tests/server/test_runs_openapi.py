"""The run routes in the OpenAPI document: each one, its documented statuses, its request
and response models, and examples that are valid runs (the schemathesis tour in
test_openapi_fuzz.py checks real answers against the same models)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.server.harness import AGENTS

from cairn.server import ServerSettings, create_app
from cairn.server.models import CreateRunRequest, RunJSON, RunsPageJSON

SESSION = "/cairn/apps/{app_name}/users/{user_id}/sessions/{session_id}"
ROUTES = {
    ("post", SESSION + "/runs"): ("202", {"400", "401", "403", "404", "409", "413", "422"}),
    ("get", SESSION + "/runs"): ("200", {"404", "422", "500", "503"}),
    ("get", SESSION + "/runs/{run_id}"): ("200", {"404", "422", "500", "503"}),
    ("post", SESSION + "/runs/{run_id}/cancel"): ("200", {"404", "422", "500", "503"}),
    ("get", SESSION + "/runs/{run_id}/stream"): ("200", {"404", "422", "500", "503"}),
    ("get", "/cairn/apps/{app_name}/users/{user_id}/runs"): ("200", {"404", "422", "500", "503"}),
}
ERROR_MODELS = {"ErrorDetail", "ServerError", "InvalidInput"}
MODELS = {
    ("post", SESSION + "/runs"): "RunJSON",
    ("get", SESSION + "/runs"): "RunsPageJSON",
    ("get", SESSION + "/runs/{run_id}"): "RunJSON",
    ("post", SESSION + "/runs/{run_id}/cancel"): "RunJSON",
    ("get", "/cairn/apps/{app_name}/users/{user_id}/runs"): "RunsPageJSON",
}


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    store = tmp_path_factory.mktemp("openapi-runs") / "sessions.db"
    return create_app(ServerSettings(agents_dir=AGENTS, store=str(store))).openapi()


def test_every_run_route_is_documented_with_its_statuses(document: dict[str, Any]) -> None:
    for (method, path), (success, failures) in ROUTES.items():
        operation = document["paths"][path][method]
        assert "runs" in operation["tags"], path
        assert operation["summary"], path
        documented = set(operation["responses"])
        assert {success} | failures <= documented, (method, path, documented)
        assert {s for s in documented if s.startswith("2")} == {success}, (method, path)
        for status in failures - {"401", "403"}:  # the auth answers have no body
            error = operation["responses"][status]["content"]["application/json"]["schema"]
            assert error["$ref"].rsplit("/", 1)[-1] in ERROR_MODELS, (path, status)
    assert {"500", "503"} <= set(document["paths"][SESSION + "/runs"]["get"]["responses"])
    stream = document["paths"][SESSION + "/runs/{run_id}/stream"]["get"]
    assert "text/event-stream" in stream["responses"]["200"]["content"]
    resume = [p for p in stream["parameters"] if p["in"] == "header"]
    assert [p["name"] for p in resume] == ["Last-Event-ID"]


def test_the_run_models_and_their_examples(document: dict[str, Any]) -> None:
    schemas = document["components"]["schemas"]
    for (method, path), model in MODELS.items():
        responses = document["paths"][path][method]["responses"]
        success = "202" if method == "post" and path.endswith("/runs") else "200"
        schema = responses[success]["content"]["application/json"]["schema"]
        assert schema["$ref"].rsplit("/", 1)[-1] == model, (method, path)
    body = document["paths"][SESSION + "/runs"]["post"]["requestBody"]["content"]
    assert body["application/json"]["schema"]["$ref"].endswith("/CreateRunRequest")
    status = schemas["RunJSON"]["properties"]["status"]
    assert set(status["enum"]) == {"pending", "running", "paused", "done", "failed", "cancelled"}

    # The examples are valid: a client generated from the document can rely on them.
    for example in schemas["CreateRunRequest"]["examples"]:
        CreateRunRequest.model_validate(example)
    (run,) = schemas["RunJSON"]["examples"]
    assert RunJSON.model_validate(run).status == "done"
    (page,) = schemas["RunsPageJSON"]["examples"]
    assert RunsPageJSON.model_validate(page).runs[0].run_id == run["runId"]
