"""The outermost layer: ``X-Cairn-Worker`` on every response, one JSON log line per request."""

from __future__ import annotations

import json
import logging
import os
import time

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cairn.server.errors import ERROR_ID_KEY, describe, failure_of

logger = logging.getLogger("cairn.server.requests")
WORKER_HEADER = "X-Cairn-Worker"


class RequestLogMiddleware:
    """Adds ``X-Cairn-Worker: <pid>`` and logs ``{method, path, status, duration_ms, worker}``
    at INFO on ``cairn.server.requests`` once the response is complete (streams included);
    a request whose server failure was reported also carries its ``error_id``, and one that
    crashed is logged at ERROR.

    It wraps even Starlette's error middleware, so a request that crashed is answered with
    a JSON 500 like any other (an error id, the detail only in the log).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        worker = str(os.getpid())
        status = 500
        response_started = False

        async def send_with_header(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status = message["status"]
                MutableHeaders(scope=message)[WORKER_HEADER] = worker
            await send(message)

        error: BaseException | None = None
        try:
            await self.app(scope, receive, send_with_header)
        except Exception as exc:
            error = exc
            failure = failure_of(exc, scope)
            if not response_started:
                body = json.dumps(failure.body()).encode()
                await send_with_header(
                    {
                        "type": "http.response.start",
                        "status": failure.status,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
        finally:
            line = {
                "method": scope["method"],
                "path": scope["path"],
                "status": status,
                "duration_ms": round((time.perf_counter() - started) * 1000, 3),
                "worker": int(worker),
            }
            if ERROR_ID_KEY in scope:
                line["error_id"] = scope[ERROR_ID_KEY]
            if error is not None:
                line["error"] = describe(error)
            level = logging.ERROR if error is not None else logging.INFO
            logger.log(level, json.dumps(line))
