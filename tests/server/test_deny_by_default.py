"""Deny by default: every route needs credentials except a short open list, however the app
is reached (at ``/``, under an ASGI root path, mounted in another app, behind
``uvicorn --root-path``), so a route added later cannot silently be open."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute, Mount
from tests.server.harness import asgi_client, server_app, uvicorn_server
from tests.support.waiting import BOUND_SECONDS

from cairn.server import ServerSettings, create_app

KEY = {"X-API-Key": "k"}
OPEN_PATHS = {"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc", "/health", "/version"}
"""The routes that answer without credentials (they hold no data); the dev UI's files and the
documentation pages' files (``/docs/assets``) too."""
OPEN_MOUNTS = {("web", ""), ("api-docs-assets", "/docs/assets")}


def every_route(app: FastAPI) -> Sequence[Any]:
    """Every route ``app`` serves, those of included routers too (FastAPI 0.137.2 and later
    keep an included router as one node of ``app.routes``; ``iter_route_contexts`` flattens
    it, each context showing the route's full path)."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # older FastAPI: app.routes is already flat
        routes: list[BaseRoute] = app.routes
        return routes
    return list(iter_route_contexts(app.routes))


def api_requests(app: FastAPI) -> Iterator[tuple[str, str]]:
    """(method, path) for every API route of ``app`` that is not open, its path parameters
    filled in."""
    for route in every_route(app):
        if not isinstance(getattr(route, "original_route", route), APIRoute):
            continue
        if route.path in OPEN_PATHS:
            continue
        path = route.path_format
        for name, convertor in route.param_convertors.items():
            value = "0" if convertor.regex == "[0-9]+" else "x"
            path = path.replace("{" + name + "}", value)
        for method in sorted(route.methods):
            yield method, path


def test_every_route_needs_credentials_or_is_on_the_open_list() -> None:
    """Each API route is requested without credentials below (and must answer 401); any other
    route must be one of the few open ones."""
    app = create_app(ServerSettings(store="memory://", api_key="k", web=True))
    open_routes = []
    for route in every_route(app):
        original = getattr(route, "original_route", route)
        if isinstance(original, Mount):
            assert (original.name, original.path) in OPEN_MOUNTS
        elif not isinstance(original, APIRoute) or route.path in OPEN_PATHS:
            open_routes.append(route.path)
    assert set(open_routes) == OPEN_PATHS
    requests = list(api_requests(app))  # not vacuous: the walk sees the included routers
    assert len(requests) >= 20 and ("POST", "/run") in requests


@pytest.mark.parametrize(
    "reached", [{}, {"root_path": "/api"}, {"mount": "/agents"}, {"root_path": "/x", "mount": "/a"}]
)
async def test_no_route_answers_without_the_key(reached: dict[str, str]) -> None:
    async with asgi_client(api_key="k", web=True, **reached) as api:
        for method, path in api_requests(server_app(api)):
            response = await api.request(method, path.lstrip("/"))
            assert response.status_code == 401, (method, path, response.text)
            assert response.headers["www-authenticate"] == "X-API-Key"
            wrong = await api.request(method, path.lstrip("/"), headers={"X-API-Key": "no"})
            assert wrong.status_code == 401, (method, path)
        for path in OPEN_PATHS - {"/docs/oauth2-redirect"}:
            assert (await api.get(path.lstrip("/"))).status_code == 200, path
        assert (await api.get("docs/assets/swagger-ui-bundle.js")).status_code == 200
        assert (await api.get("")).status_code == 200  # the dev UI
        listed = await api.get("list-apps", headers=KEY)
        assert listed.status_code == 200 and "echo" in listed.json()
        created = await api.post("apps/echo/users/ada/sessions", headers=KEY, json={})
        assert created.status_code == 200
        assert (await api.get("cairn/apps/echo/users/*/sessions")).status_code == 401
        sid = created.json()["id"]
        gone = await api.delete(f"apps/echo/users/ada/sessions/{sid}")
        assert gone.status_code == 401
        assert (await api.delete(f"apps/echo/users/ada/sessions/{sid}", headers=KEY)).is_success


def test_uvicorn_with_a_root_path_asks_for_the_key(tmp_path: Path) -> None:
    """The reported case: ``uvicorn --root-path /api`` with ``CAIRN_API_KEY`` set."""
    env = {"CAIRN_STORE": str(tmp_path / "sessions.db"), "CAIRN_API_KEY": "k"}
    routes = list(api_requests(create_app(ServerSettings(store="memory://"))))
    with (
        uvicorn_server(env, args=["--root-path", "/api"], log=tmp_path / "log") as url,
        httpx.Client(base_url=url, timeout=BOUND_SECONDS) as client,
    ):
        for method, path in routes:
            response = client.request(method, path)
            assert response.status_code == 401, (method, path, response.text)
        created = client.post("/apps/echo/users/ada/sessions", json={}, headers=KEY)
        assert created.status_code == 200
        assert client.get("/cairn/apps/echo/users/*/sessions").status_code == 401
        page = client.get("/cairn/apps/echo/users/*/sessions", headers=KEY).json()
        assert page["total"] == 1
        assert client.get("/openapi.json").status_code == 200
