"""A run's webhook on Temporal: delivered by a final activity once the run has ended."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from tests.runs.temporal.harness import Harness
from tests.support.waiting import until

from cairn.sessions.run_store import RunStatus

pytestmark = pytest.mark.asyncio(loop_scope="module")


class Receiver(BaseHTTPRequestHandler):
    received: list[tuple[dict[str, str], dict[str, object]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Receiver.received.append((dict(self.headers), json.loads(body)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    finally:
        server.shutdown()
        server.server_close()


async def test_a_runs_webhook_is_delivered_after_it_ends(
    harness: Harness, session_id: str, receiver: str
) -> None:
    async with harness.worker():
        run = await harness.submit(session_id, webhook=receiver)
        assert (await harness.settled(run)).status is RunStatus.DONE

        async def delivered() -> bool:
            return (await harness.row(run)).webhook_done

        await until(delivered, "the webhook is delivered")
    [(headers, body)] = [item for item in Receiver.received if run.run_id in json.dumps(item[1])]
    assert headers["Cairn-Event"] == "run.done"
    assert json.dumps(body).count(run.run_id) >= 1
