"""ADK's ``/health`` and ``/version``: the same paths, statuses and bodies as google-adk's
API server, open without credentials (probes have none), on the API and the dev UI's app."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.server.harness import asgi_client
from tests.support.waiting import BOUND_SECONDS

import cairn

ADK_PYTHON = Path(__file__).resolve().parents[2] / "bench" / ".peers" / "adk" / "bin" / "python"
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}"


async def test_health_and_version_answer_as_adk_documents_them() -> None:
    async with asgi_client() as api:
        health = await api.get("/health")
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        version = await api.get("/version")
        assert version.status_code == 200
        assert version.json() == {
            "version": cairn.__version__,
            "language": "python",
            "language_version": PYTHON,
        }
        assert version.headers["content-type"] == "application/json"


@pytest.mark.parametrize("web", [False, True], ids=["api_server", "web"])
async def test_probes_need_no_credentials_where_every_other_route_does(web: bool) -> None:
    async with asgi_client(api_key="k", web=web) as api:
        assert (await api.get("/list-apps")).status_code == 401
        assert (await api.get("/health")).json() == {"status": "ok"}
        assert (await api.get("/version")).json()["version"] == cairn.__version__
        # A wrong key is not looked at either: a probe's headers do not matter.
        assert (await api.get("/health", headers={"X-API-Key": "wrong"})).status_code == 200


async def test_probes_answer_under_a_root_path_and_a_mount() -> None:
    async with asgi_client(api_key="k", root_path="/api", mount="/agents") as api:
        assert (await api.get("health")).json() == {"status": "ok"}
        assert (await api.get("list-apps")).status_code == 401


async def test_the_openapi_document_declares_the_probes_open() -> None:
    async with asgi_client(api_key="k") as api:
        document: dict[str, Any] = (await api.get("/openapi.json")).json()
    paths, schemas = document["paths"], document["components"]["schemas"]
    fields = {"/health": {"status"}, "/version": {"version", "language", "language_version"}}
    for path, names in fields.items():
        operation = paths[path]["get"]
        assert "security" not in operation and "401" not in operation["responses"], path
        answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
        model = schemas[answer["$ref"].removeprefix("#/components/schemas/")]
        assert set(model["properties"]) == names and set(model["required"]) == names
    assert paths["/list-apps"]["get"]["security"] == [{"APIKeyHeader": []}]


def _adk_answers(tmp_path: Path) -> dict[str, Any]:
    if not ADK_PYTHON.exists():
        pytest.skip(f"google-adk's venv is missing ({ADK_PYTHON}); make it with bench/peers.py")
    result = subprocess.run(
        [str(ADK_PYTHON), str(Path(__file__).with_name("adk_probes.py")), str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=BOUND_SECONDS,
    )
    assert result.returncode == 0, result.stderr
    answers: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    return answers


async def test_every_method_of_the_probes_answers_as_adk_does(tmp_path: Path) -> None:
    """Same status and content type for GET, POST and HEAD; the same GET bodies, but for
    ``version`` (cairn's, not ADK's) and the Python version ADK's venv runs."""
    adk = _adk_answers(tmp_path)
    async with asgi_client() as api:
        for request, theirs in adk.items():
            method, path = request.split(" ")
            response = await api.request(method, path)
            ours = {
                "status": response.status_code,
                "content_type": response.headers.get("content-type"),
                "body": response.json() if method == "GET" else None,
            }
            if path == "/version" and method == "GET":
                assert set(ours["body"]) == set(theirs["body"])
                ours["body"] = {**ours["body"], "version": "*", "language_version": "*"}
                theirs["body"] = {**theirs["body"], "version": "*", "language_version": "*"}
            assert ours == theirs, request
