"""Request bodies larger than ``max_body_bytes`` are refused with 413, announced or streamed."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyTooLargeError(HTTPException):
    """Raised while reading a body that grew past the limit (FastAPI passes it through)."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            status_code=413,
            detail=f"the request body is larger than this server's limit of {limit:,} bytes. "
            "Send less (keep large files in artifacts), or start the server with a larger "
            "max_body_bytes (CAIRN_MAX_BODY_BYTES).",
        )


class BodyLimitMiddleware:
    """Checks ``Content-Length`` up front, and counts the bytes of bodies sent in chunks."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.limit = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = BodyTooLargeError(self.limit)
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _refuse(too_large, scope, receive, send)
            return
        received = 0
        response_started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise too_large
            return message

        async def watching_send(message: Message) -> None:
            nonlocal response_started
            response_started = response_started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except BodyTooLargeError as exc:
            if response_started:
                raise
            await _refuse(exc, scope, receive, send)


async def _refuse(error: BodyTooLargeError, scope: Scope, receive: Receive, send: Send) -> None:
    response = JSONResponse(
        {"detail": error.detail}, status_code=413, headers={"Connection": "close"}
    )
    await response(scope, receive, send)
