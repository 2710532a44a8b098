"""Stopping an invocation this server process runs: it ends at once, what it committed
stays, it shows as interrupted like after a crash, and it can be continued.

The ``gate`` app's tool blocks until a file the test names exists, so the invocation is
surely running (mid-call) when the test stops it.
"""

from __future__ import annotations

import concurrent.futures
import json
from pathlib import Path
from typing import Any

import httpx
from tests.server.harness import run_body
from tests.support.waiting import BOUND_SECONDS, wait_until

SESSION = "/apps/gate/users/ada/sessions/{}"


def log_of(client: httpx.Client, session: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = client.get(SESSION.format(session)).json()["events"]
    return events


def test_a_stopped_invocation_ends_keeps_its_events_and_can_be_continued(
    gated: str, tmp_path: Path
) -> None:
    flag = tmp_path / "release"
    cairn = "/cairn" + SESSION.format("s")
    with (
        httpx.Client(base_url=gated, timeout=BOUND_SECONDS) as client,
        httpx.Client(base_url=gated, timeout=BOUND_SECONDS) as other,
    ):
        client.post("/apps/gate/users/ada/sessions", json={"sessionId": "s"})
        with client.stream("POST", "/run_sse", json=run_body("gate", "s", str(flag))) as stream:
            lines = stream.iter_lines()
            first = json.loads(next(x for x in lines if x.startswith("data: "))[6:])
            invocation = first["invocationId"]
            # The tool waits for the flag: the invocation runs in this process.
            running = other.get(cairn + "/invocations/running").json()
            assert running == {"invocationIds": [invocation]}
            stopped = other.post(f"{cairn}/invocations/{invocation}/stop")
            assert stopped.status_code == 200
            assert stopped.json() == {"invocationId": invocation, "stopped": True}
            rest = list(lines)  # the stream ends: the client is not left waiting
        assert [x for x in rest if x.startswith("data: ")] == []

        # The stop answered once the invocation had ended: nothing runs, nothing more comes.
        assert other.get(cairn + "/invocations/running").json() == {"invocationIds": []}
        kept = log_of(client, "s")
        assert [e["invocationId"] for e in kept] == [invocation] * len(kept)
        assert kept[-1]["content"]["parts"][0]["functionCall"]["name"] == "wait_for_release"
        again = other.post(f"{cairn}/invocations/{invocation}/stop")
        assert (
            again.status_code == 409
            and "not running in this server process" in (again.json()["detail"])
        )

        # It shows as interrupted mid-call, as after a crash, and is continued.
        (interrupted,) = client.get(cairn + "/interrupts").json()
        assert interrupted["kind"] == "interrupted"
        assert interrupted["invocationId"] == invocation
        # Continued, the call it stopped in is in doubt (it may have had an effect), as
        # after a crash; answered "rerun", it runs again and the invocation ends.
        client.post("/run_sse", json=run_body("gate", "s", invocationId=invocation))
        (doubt,) = client.get(cairn + "/interrupts").json()
        assert doubt["kind"] == "in_doubt" and doubt["invocationId"] == invocation
        flag.touch()
        client.post(f"{cairn}/interrupts/{doubt['id']}", json={"response": {"rerun": True}})
        final = log_of(client, "s")
        assert final[: len(kept)] == kept
        assert final[-1]["content"]["parts"][0]["text"] == "released"
        assert client.get(cairn + "/interrupts").json() == []
        assert client.get(cairn + "/verify").json() == {"ok": True, "differences": []}


def test_stopping_what_does_not_run_here_is_409_and_a_missing_session_404(gated: str) -> None:
    with httpx.Client(base_url=gated, timeout=BOUND_SECONDS) as client:
        client.post("/apps/gate/users/ada/sessions", json={"sessionId": "idle"})
        idle = client.post("/cairn" + SESSION.format("idle") + "/invocations/nope/stop")
        assert idle.status_code == 409
        assert "'nope'" in idle.json()["detail"] and "another process" in idle.json()["detail"]
        missing = client.post("/cairn" + SESSION.format("missing") + "/invocations/x/stop")
        assert missing.status_code == 404 and "'missing'" in missing.json()["detail"]


def test_a_run_in_its_first_model_call_is_stopped_and_its_message_kept(
    gated: str, tmp_path: Path
) -> None:
    """Nothing is streamed before the model answers, yet the run is known by its committed
    message and can be stopped; continued later, it asks the model again."""
    flag = tmp_path / "release"
    cairn = "/cairn/apps/ponder/users/ada/sessions/p"
    with (
        httpx.Client(base_url=gated, timeout=BOUND_SECONDS) as client,
        httpx.Client(base_url=gated, timeout=BOUND_SECONDS) as other,
    ):
        client.post("/apps/ponder/users/ada/sessions", json={"sessionId": "p"})
        # The answer's headers wait for its first event: the request runs on a thread.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            answer = pool.submit(client.post, "/run_sse", json=run_body("ponder", "p", str(flag)))
            running: list[str] = []

            def known() -> bool:
                running[:] = other.get(cairn + "/invocations/running").json()["invocationIds"]
                return bool(running)

            wait_until(known, "the run being listed as running")
            (invocation,) = running
            assert other.post(f"{cairn}/invocations/{invocation}/stop").status_code == 200
            # The user's message is not streamed (as ADK's server), and nothing else came.
            streamed = answer.result()
            assert streamed.status_code == 200 and streamed.text == ""
        (message,) = client.get("/apps/ponder/users/ada/sessions/p").json()["events"]
        assert message["author"] == "user" and message["invocationId"] == invocation
        assert client.get(cairn + "/interrupts").json() == []
        flag.touch()
        continued = client.post("/run", json=run_body("ponder", "p", invocationId=invocation))
        assert [e["content"]["parts"][0]["text"] for e in continued.json()] == ["pondered"]
