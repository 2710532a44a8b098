"""Authentication, denied by default: one dependency of the whole app turns each request
into a ``Principal`` and checks the route's app and user against it.

``create_app`` gives ``authenticated`` to FastAPI as an app-wide dependency, so every API
route runs it, a route added later included. Only ``OPEN_PATHS`` (the OpenAPI document, its
viewers and their files, ADK's ``/health`` and ``/version``: none holds data) and the dev
UI's files answer without credentials. The
check runs after routing, on the route's own path parameters, so it holds under any root
path or mount (a check on the raw path prefix does not). How a request becomes a principal
is an ``Authenticate`` callable: nobody checked, the shared API key, JWT bearer tokens
(``cairn.server.jwt_auth``), or the deployment's own hook.
"""

from __future__ import annotations

import hmac
import importlib
import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, cast

from fastapi import Depends, FastAPI, Request, Security
from fastapi.params import Depends as DependsParam
from fastapi.responses import Response
from fastapi.security import APIKeyHeader
from starlette.concurrency import run_in_threadpool

from cairn.server.access import ANYONE, Principal, check_path
from cairn.server.errors import AuthenticationError, error_response
from cairn.server.settings import ServerSettings

API_KEY_HEADER = "X-API-Key"
OPEN_PATHS = (
    "/openapi.json",
    "/docs",
    "/docs/oauth2-redirect",
    "/docs/assets",
    "/redoc",
    "/health",
    "/version",
)
"""The only routes (with the dev UI's static files) that answer without credentials:
``/docs/assets`` holds the documentation pages' scripts and styles; ``/health`` and
``/version`` are open as in ADK, for probes that have no credentials (``/version`` tells
cairn's and Python's versions; a public deployment that would hide them blocks the path at
its proxy)."""

Authenticate = Callable[[Request], Awaitable[Principal]] | Callable[[Request], Principal]
"""Turns a request into its principal, or raises ``AuthenticationError`` (401) or
``PermissionDeniedError`` (403). A sync one runs in a worker thread, never on the event loop.
An optional ``security`` attribute (a FastAPI security scheme) is shown in the OpenAPI
document."""

AUTH_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {
        "description": "Credentials missing or not valid; `WWW-Authenticate` says what to send",
        "headers": {"WWW-Authenticate": {"schema": {"type": "string"}}},
    },
    403: {"description": "The credentials do not allow this app, user or app: state write"},
}
"""The answers of ``authenticated``, declared on every route (``create_app``)."""


class ApiKeyAuthenticator:
    """The shared key in ``X-API-Key``, compared in constant time. Whoever holds it is
    ``ANYONE``: an admin acting for whatever user id the request names."""

    security = APIKeyHeader(name=API_KEY_HEADER, auto_error=False)

    def __init__(self, api_key: str) -> None:
        self._key = api_key.encode()

    async def __call__(self, request: Request) -> Principal:
        given = request.headers.get(API_KEY_HEADER, "").encode()
        if hmac.compare_digest(given, self._key):
            return ANYONE
        reason = "is missing" if not given else "does not match the server's key"
        raise AuthenticationError(
            f"the header {API_KEY_HEADER} {reason}. Send the key the server was started with "
            f"(CAIRN_API_KEY / --api-key) in {API_KEY_HEADER}.",
            challenge=API_KEY_HEADER,
        )


async def _anyone(request: Request) -> Principal:
    """No credentials configured: every request is ``ANYONE`` (a local, trusted server)."""
    return ANYONE


def load_authenticate(spec: str) -> Authenticate:
    """The callable ``module:attribute`` names (``ServerSettings.authenticate``)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(
            f"authenticate={spec!r} must name a callable as module:function, "
            "e.g. CAIRN_AUTHENTICATE=myproject.auth:authenticate"
        )
    try:
        found: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"authenticate={spec!r} cannot be loaded: {exc}") from exc
    if not callable(found):
        raise ValueError(f"authenticate={spec!r} names {type(found).__name__}, not a callable")
    hook: Authenticate = found
    return hook


def configured_authenticator(
    settings: ServerSettings, authenticate: Authenticate | None
) -> Authenticate:
    """The one way this server authenticates: the ``authenticate`` given to ``create_app``,
    the hook ``settings.authenticate`` names, JWT, the API key, or none."""
    chosen = [
        name
        for name, value in (
            ("create_app(authenticate=...)", authenticate),
            ("authenticate (CAIRN_AUTHENTICATE)", settings.authenticate),
            ("jwt (CAIRN_JWT_*)", settings.jwt),
            ("api_key (CAIRN_API_KEY)", settings.api_key),
        )
        if value is not None
    ]
    if len(chosen) > 1:
        raise ValueError(
            f"the server is given more than one way to authenticate: {', '.join(chosen)}; "
            "configure exactly one"
        )
    if authenticate is not None:
        return authenticate
    if settings.authenticate is not None:
        return load_authenticate(settings.authenticate)
    if settings.jwt is not None:
        from cairn.server.jwt_auth import JWTAuthenticator  # needs PyJWT: cairn[jwt]

        return JWTAuthenticator(settings.jwt)
    if settings.api_key is not None:
        return ApiKeyAuthenticator(settings.api_key)
    return _anyone


async def authenticated(request: Request) -> Principal:
    """The app-wide dependency: the request's principal, allowed the route's app and user."""
    authenticate: Callable[[Request], Awaitable[Principal]] = request.app.state.cairn_authenticate
    principal = await authenticate(request)
    if not isinstance(principal, Principal):
        raise TypeError(
            f"the authenticate hook returned {type(principal).__name__}, not a Principal"
        )
    check_path(principal, request.path_params)
    return principal


Caller = Annotated[Principal, Depends(authenticated)]
"""A route parameter ``caller: Caller`` receives the request's principal (computed once)."""


def app_dependencies(authenticate: Authenticate) -> list[DependsParam]:
    """``authenticated`` for every route, and the hook's security scheme for the OpenAPI
    document (its value is not used: the hook reads the request itself)."""
    scheme = getattr(authenticate, "security", None)
    return [Depends(authenticated), *([Security(scheme)] if scheme is not None else [])]


def install_authentication(app: FastAPI, authenticate: Authenticate) -> None:
    """Hands ``authenticated`` the hook, and answers ``AuthenticationError`` with its
    ``WWW-Authenticate`` challenge."""
    if inspect.iscoroutinefunction(authenticate) or inspect.iscoroutinefunction(
        getattr(authenticate, "__call__", None)  # noqa: B004 - an object with async __call__
    ):
        app.state.cairn_authenticate = authenticate
    else:
        sync = cast(Callable[[Request], Principal], authenticate)

        async def in_thread(request: Request) -> Principal:
            return await run_in_threadpool(sync, request)

        app.state.cairn_authenticate = in_thread

    async def challenge(request: Request, exc: Exception) -> Response:
        response = error_response(exc)
        if isinstance(exc, AuthenticationError):
            response.headers["WWW-Authenticate"] = exc.challenge
        return response

    app.add_exception_handler(AuthenticationError, challenge)
