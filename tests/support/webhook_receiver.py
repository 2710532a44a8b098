"""A real webhook receiver on a local port: it keeps every POST (body bytes and headers) and
answers each with the next of the replies it was given (then 200s)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.waiting import BOUND_SECONDS


@dataclass(frozen=True)
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Received:
    path: str
    body: bytes
    headers: dict[str, str]


@dataclass
class Receiver:
    url: str
    replies: list[Reply] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, count: int) -> list[Received]:
        """Wait until ``count`` requests have arrived; return them."""
        with self.arrived:
            got = self.arrived.wait_for(lambda: len(self.received) >= count, BOUND_SECONDS)
        assert got, f"the receiver got {len(self.received)} requests, not {count}"
        return list(self.received)


@contextmanager
def webhook_receiver(*replies: Reply) -> Iterator[Receiver]:
    """Serve on 127.0.0.1 (a free port) until the block ends; ``replies`` answer the first
    requests in order."""
    receiver: Receiver

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with receiver.arrived:
                reply = receiver.replies.pop(0) if receiver.replies else Reply()
                receiver.received.append(Received(self.path, body, dict(self.headers.items())))
                receiver.arrived.notify_all()
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver = Receiver(f"http://127.0.0.1:{server.server_address[1]}", list(replies))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
