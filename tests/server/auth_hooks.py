"""An authentication hook for the tests, importable by uvicorn (``CAIRN_AUTHENTICATE``)."""

from __future__ import annotations

from fastapi import Request

from cairn.server import Principal
from cairn.server.errors import AuthenticationError, PermissionDeniedError


def header_user(request: Request) -> Principal:
    """A sync hook (runs in a worker thread): the user a trusted proxy put in ``X-User``;
    ``ops`` is an admin, ``mallory`` is refused, everyone may use only the ``echo`` app."""
    user = request.headers.get("X-User")
    if user is None:
        raise AuthenticationError("send X-User", challenge="X-User")
    if user == "mallory":
        raise PermissionDeniedError("mallory is banned")
    return Principal(user_id=user, apps=frozenset({"echo"}), admin=user == "ops")
