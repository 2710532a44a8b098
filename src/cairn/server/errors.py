"""cairn's errors as HTTP statuses, and the handlers that answer ``{"detail": message}``."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from cairn.artifacts.errors import InvalidArtifactNameError, UnsupportedArtifactError
from cairn.errors import (
    AlreadyExistsError,
    CairnError,
    EventNotFoundError,
    InterruptNotPendingError,
    InvalidAnswerError,
    InvalidCursorError,
    InvalidEventError,
    InvalidIdError,
    InvalidStateValueError,
    InvocationInterruptedError,
    InvocationNotFoundError,
    LimitExceededError,
    SessionBusyError,
    SessionNotFoundError,
    StaleSessionError,
    StoreUnavailableError,
)
from cairn.server.registry import AppNotFoundError

logger = logging.getLogger("cairn.server")


class NotFoundError(CairnError, LookupError):
    """Something a route names (an artifact, a version, an interrupt) does not exist."""


class InvalidRequestError(CairnError, ValueError):
    """A request that is well-formed JSON but asks for something impossible."""


_STATUS: list[tuple[type[BaseException], int]] = [
    (AppNotFoundError, 404),
    (SessionNotFoundError, 404),
    (InvocationNotFoundError, 404),
    (EventNotFoundError, 404),
    (NotFoundError, 404),
    (AlreadyExistsError, 409),
    (SessionBusyError, 409),
    (StaleSessionError, 409),
    (InterruptNotPendingError, 409),
    (InvocationInterruptedError, 409),
    (InvalidAnswerError, 422),
    (InvalidStateValueError, 422),
    (InvalidEventError, 422),
    (InvalidCursorError, 422),
    (LimitExceededError, 422),
    (InvalidArtifactNameError, 422),
    (UnsupportedArtifactError, 422),
    (InvalidRequestError, 422),
    (StoreUnavailableError, 503),
    (InvalidIdError, 422),
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


def error_response(error: BaseException) -> Response:
    status = status_of(error)
    detail = str(error) if status < 500 or isinstance(error, CairnError) else _describe(error)
    return JSONResponse({"detail": detail}, status_code=status)


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def install_error_handlers(app: FastAPI) -> None:
    """cairn errors keep their message and get their status; anything else is a 500."""

    async def cairn_error(request: Request, exc: Exception) -> Response:
        return error_response(exc)

    async def unexpected(request: Request, exc: Exception) -> Response:
        return JSONResponse({"detail": _describe(exc)}, status_code=500)

    app.add_exception_handler(CairnError, cairn_error)
    app.add_exception_handler(Exception, unexpected)
