"""Schemathesis against the served OpenAPI schema: no request, however odd, gets a 500."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from tests.server.harness import AGENTS

from cairn.server import ServerSettings, create_app

app = create_app(ServerSettings(agents_dir=AGENTS, store="memory://"))
schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_request_is_a_server_error(case: schemathesis.Case) -> None:
    response = case.call()
    assert response.status_code < 500, (case.method, case.formatted_path, case.body, response.text)
    assert response.headers.get("x-cairn-worker")
