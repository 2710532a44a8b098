"""cairn's errors as HTTP statuses, and the handlers that answer ``{"detail": message}``.

A request's own fault (4xx) is answered with cairn's message. A server failure (5xx)
never shows its text to the client: it is logged with its traceback under a new error
id, and the client gets a generic detail naming that id.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.routing import Match, Mount
from starlette.types import Scope

from cairn.artifacts.errors import InvalidArtifactNameError, UnsupportedArtifactError
from cairn.errors import (
    AlreadyExistsError,
    CairnError,
    EventNotFoundError,
    InputValidationError,
    InterruptNotPendingError,
    InvalidAnswerError,
    InvalidCursorError,
    InvalidEventError,
    InvalidIdError,
    InvalidRunRequestError,
    InvalidStateValueError,
    InvocationInterruptedError,
    InvocationNotFoundError,
    LeaseLostError,
    LimitExceededError,
    RunNotFoundError,
    SessionBusyError,
    SessionNotFoundError,
    StaleSessionError,
    StoreUnavailableError,
)
from cairn.runs.executor import ExecutorUnavailableError
from cairn.server.registry import AppNotFoundError

logger = logging.getLogger("cairn.server")


class NotFoundError(CairnError, LookupError):
    """Something a route names (an artifact, a version, an interrupt) does not exist."""


class InvalidRequestError(CairnError, ValueError):
    """A request that is well-formed JSON but asks for something impossible."""


class NotRunningHereError(CairnError, RuntimeError):
    """The invocation a request would stop is not running in this server process (409)."""


class AuthenticationError(CairnError, PermissionError):
    """The request's credentials are missing or not valid (401); ``challenge`` is the
    ``WWW-Authenticate`` value that tells the client what to send."""

    def __init__(self, message: str, *, challenge: str) -> None:
        super().__init__(message)
        self.challenge = challenge


class PermissionDeniedError(CairnError, PermissionError):
    """The authenticated principal may not do what the request asks (403)."""


_STATUS: list[tuple[type[BaseException], int]] = [
    (AppNotFoundError, 404),
    (SessionNotFoundError, 404),
    (InvocationNotFoundError, 404),
    (EventNotFoundError, 404),
    (RunNotFoundError, 404),
    (NotFoundError, 404),
    (AlreadyExistsError, 409),
    (SessionBusyError, 409),
    (StaleSessionError, 409),
    (LeaseLostError, 409),
    (InterruptNotPendingError, 409),
    (InvocationInterruptedError, 409),
    (NotRunningHereError, 409),
    (InvalidAnswerError, 422),
    (InvalidStateValueError, 422),
    (InvalidEventError, 422),
    (InvalidCursorError, 422),
    (LimitExceededError, 422),
    (InvalidArtifactNameError, 422),
    (UnsupportedArtifactError, 422),
    (InvalidRequestError, 422),
    (InvalidRunRequestError, 422),
    (StoreUnavailableError, 503),
    (ExecutorUnavailableError, 503),
    (AuthenticationError, 401),
    (PermissionDeniedError, 403),
    (InvalidIdError, 422),
    (InputValidationError, 422),  # InvalidScheduleError, WebhookUrlError, ...
]


def status_of(error: BaseException) -> int:
    """The HTTP status for ``error``: 404, 409, 422 or 503 for cairn's typed errors, else 500."""
    for kind, status in _STATUS:
        if isinstance(error, kind):
            return status
    return 500


def is_client_error(error: BaseException) -> bool:
    """Whether ``error`` is the request's fault (a 4xx), not the agent's or the server's."""
    return 400 <= status_of(error) < 500


ERROR_ID_KEY = "cairn.error_id"
"""The scope key under which a request's reported server failure keeps its error id."""


@dataclasses.dataclass(frozen=True)
class Failure:
    """What a client may see of an error: its status, a safe detail, and (5xx) an error id."""

    status: int
    detail: str
    error_id: str | None = None

    def body(self) -> dict[str, str]:
        """The JSON body of an error response: ``{"detail"}``, plus ``errorId`` for a 5xx."""
        if self.error_id is None:
            return {"detail": self.detail}
        return {"detail": self.detail, "errorId": self.error_id}


def report(error: BaseException) -> str:
    """Log ``error`` with its traceback under a new error id (the only place its text goes)."""
    error_id = uuid.uuid4().hex
    logger.error("error %s: %s", error_id, describe(error), exc_info=error)
    return error_id


def failure_of(error: BaseException, scope: Scope | None = None) -> Failure:
    """``error`` as the client may see it; a 5xx is reported once (per request ``scope``)."""
    status = status_of(error)
    if status < 500:
        return Failure(status, str(error))
    error_id = scope.get(ERROR_ID_KEY) if scope is not None else None
    if error_id is None:
        error_id = report(error)
        if scope is not None:
            scope[ERROR_ID_KEY] = error_id
    if status == 503:
        what = "run executor" if isinstance(error, ExecutorUnavailableError) else "store"
        detail = (
            f"the server cannot reach its {what} right now; retry later. If it persists, "
            f"the server's log has the cause under error id {error_id}."
        )
    else:
        detail = (
            "the server failed while handling this request. Its log has the details under "
            f"error id {error_id}; quote that id when you report it."
        )
    return Failure(status, detail, error_id)


def error_response(error: BaseException, scope: Scope | None = None) -> Response:
    failure = failure_of(error, scope)
    return JSONResponse(failure.body(), status_code=failure.status)


def describe(error: BaseException) -> str:
    """``Type: message``, for the server's log (never for a client, unless a 4xx)."""
    return f"{type(error).__name__}: {error}"


def install_error_handlers(app: FastAPI) -> None:
    """cairn's 4xx errors keep their message and get their status; anything else is a 5xx
    whose detail is only in the log, under the error id the client is given."""

    async def handle(request: Request, exc: Exception) -> Response:
        return error_response(exc, request.scope)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:
            exc.headers = {**(exc.headers or {}), "Allow": ", ".join(allowed_methods(request))}
        return await http_exception_handler(request, exc)

    app.add_exception_handler(CairnError, handle)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, handle)


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route answers at this path (Starlette's 405 names only the first
    matching route's, and one path often has several: GET, PATCH and DELETE of a session)."""
    routes = [route for route in request.app.router.routes if not isinstance(route, Mount)]
    return [
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] == Match.FULL for route in routes
        )
    ]
