"""The optional API key: API routes answer 401 unless ``X-API-Key`` carries it."""

from __future__ import annotations

import hmac

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

API_KEY_HEADER = "X-API-Key"
_API_PREFIXES = ("/list-apps", "/apps/", "/run", "/cairn/")


def is_api_path(path: str) -> bool:
    """API routes need the key; the OpenAPI schema, ``/docs`` and the dev UI's files do not."""
    return path == "/apps" or path.startswith(_API_PREFIXES)


class ApiKeyMiddleware:
    """Refuses API requests without the right ``X-API-Key`` (compared in constant time)."""

    def __init__(self, app: ASGIApp, api_key: str) -> None:
        self.app = app
        self.api_key = api_key.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] == "OPTIONS"
            or not is_api_path(scope["path"])
        ):
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get(API_KEY_HEADER, "").encode()
        if hmac.compare_digest(given, self.api_key):
            await self.app(scope, receive, send)
            return
        reason = "is missing" if not given else "does not match the server's key"
        response = JSONResponse(
            {
                "detail": f"the header {API_KEY_HEADER} {reason}. Send the key the server was "
                f"started with (CAIRN_API_KEY / --api-key) in {API_KEY_HEADER}."
            },
            status_code=401,
            headers={"WWW-Authenticate": API_KEY_HEADER},
        )
        await response(scope, receive, send)
