"""``create_app(settings)``: the FastAPI app; ``app_from_env()`` for ``uvicorn --factory``."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from cairn.server.api_docs import assets_directory, install_api_docs
from cairn.server.auth import (
    API_KEY_HEADER,
    AUTH_RESPONSES,
    Authenticate,
    app_dependencies,
    configured_authenticator,
    install_authentication,
)
from cairn.server.body_limit import BodyLimitMiddleware
from cairn.server.context import ServerContext
from cairn.server.errors import install_error_handlers
from cairn.server.executors import open_runs
from cairn.server.registry import AppRegistry
from cairn.server.request_log import WORKER_HEADER, RequestLogMiddleware
from cairn.server.routes import (
    apps,
    artifact_uploads,
    artifacts,
    history,
    interrupts,
    probes,
    run,
    running,
    runs,
    schedules,
    sessions,
    traces,
)
from cairn.server.services import Services
from cairn.server.settings import ServerSettings
from cairn.server.tracing import install_tracing
from cairn.serving_gc import prepare_gc_for_serving


class _CairnAPI(FastAPI):
    """FastAPI with the request log outside everything else, Starlette's error layer included,
    so that every response (a crash's 500 too) carries ``X-Cairn-Worker`` and is logged."""

    def build_middleware_stack(self) -> ASGIApp:
        return RequestLogMiddleware(super().build_middleware_stack())


def create_app(settings: ServerSettings, *, authenticate: Authenticate | None = None) -> FastAPI:
    """The HTTP API over the apps in ``settings.agents_dir`` (see docs/server.md).

    The stores are opened once for the process and closed when the app shuts down
    (its lifespan); each app gets one Runner, made on first use. ``authenticate`` turns a
    request into its ``Principal`` (``cairn.server.auth``); without it, ``settings`` says
    how requests are authenticated (a hook, JWT, the API key, or not at all).
    """
    authenticator = configured_authenticator(settings, authenticate)
    docs_assets = assets_directory()  # before any store is opened: fails on a bad install
    services = Services.open(settings.store, settings.artifact_store, settings.memory_store)
    registry = AppRegistry(
        settings.agents_dir,
        services,
        auto_create_session=settings.auto_create_session,
        lease_ttl=settings.lease_ttl,
    )
    context = ServerContext(
        settings=settings,
        services=services,
        apps=registry,
        runs=open_runs(settings, services, registry),
    )

    install_tracing(context)
    closing: list[Callable[[], Awaitable[None]]] = []
    starting: list[Callable[[], Awaitable[None]]] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        prepare_gc_for_serving()
        try:
            await context.runs.executor.start()  # takes over runs whose process died
            await context.schedules.start()  # fires schedules; delivers pending webhooks
            for start in starting:
                await start()
            yield
        finally:
            for close in closing:
                await close()
            await context.close()

    app = _CairnAPI(
        title="cairn",
        summary="ADK-compatible HTTP API over an append-only event log",
        lifespan=lifespan,
        dependencies=app_dependencies(authenticator),  # every route, before any is added
        responses=AUTH_RESPONSES,
        docs_url=None,  # install_api_docs: the pages without a CDN
        redoc_url=None,
    )
    app.state.cairn = context
    install_error_handlers(app)
    install_authentication(app, authenticator)
    install_api_docs(app, docs_assets)
    # /health and /version are open, as in ADK: their routes join the app as they are,
    # outside the app-wide dependency and its 401/403 (auth.OPEN_PATHS).
    app.router.routes.extend(probes.router.routes)
    for module in (
        apps,
        sessions,
        run,
        artifacts,
        artifact_uploads,
        history,
        interrupts,
        running,
        runs,
        schedules,
        traces,
    ):
        app.include_router(module.router)
    # Added innermost first: CORS (outermost) -> body limit -> routes (authenticated).
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=settings.max_body_bytes)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=[WORKER_HEADER],
        )
    if settings.a2a:
        from cairn.a2a.serving import install_a2a  # needs the a2a-sdk: cairn[a2a]

        a2a_apps = install_a2a(app, context)
        starting.append(a2a_apps.start)  # re-arms push notifications
        closing.append(a2a_apps.close)
    if settings.web:
        from cairn.server.routes import evals  # the dev UI's evaluation (ADK's dev server)
        from cairn.web import STATIC_DIR  # only a server with the UI needs its files

        if not (STATIC_DIR / "index.html").is_file():
            raise RuntimeError(
                f"web=True serves the dev UI from {STATIC_DIR}, which has no index.html; "
                "reinstall cairn, or start the server without the UI (cairn api-server)"
            )
        app.include_router(evals.router)
        app.mount("/", StaticFiles(directory=STATIC_DIR, html=True), name="web")
    return app


def app_from_env() -> FastAPI:
    """``create_app(ServerSettings.from_env())``, with request logs on stderr.

    For ``uvicorn --factory cairn.server:app_from_env --workers N``: every worker process
    builds its own app (its own stores, its own Runners) from the ``CAIRN_*`` variables.
    """
    log = logging.getLogger("cairn.server")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    return create_app(ServerSettings.from_env())


__all__ = ["API_KEY_HEADER", "WORKER_HEADER", "app_from_env", "create_app"]
