"""A remote task that waits (``input-required``, ``auth-required``, a long-running call of the
remote's own) pauses the local invocation on an interrupt answered like any other, through the
Runner, after a restart on SQLite, and over cairn's HTTP API; the answer goes to the same
remote task, which goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from tests.a2a.client.steps import SESSION, USER, answer, records, texts, turn
from tests.server.harness import run_body, sse_payloads, uvicorn_server
from tests.support.a2a_scripted_server import ScriptedA2aServer
from tests.support.waiting import BOUND_SECONDS

from cairn import InMemoryRunner, Runner
from cairn.agents.remote_a2a_agent import RemoteA2aAgent
from cairn.sessions import SqliteSessionService

AGENTS = Path(__file__).resolve().parent / "agents"


async def started(runner: Runner) -> Runner:
    await runner.session_service.create_session(app_name="app", user_id=USER, session_id=SESSION)
    return runner


async def test_input_required_is_a_pending_interrupt_whose_answer_goes_to_the_same_task(
    server: ScriptedA2aServer,
) -> None:
    server.script({"ask": "Which city?"}, {"answer": "Sunny in {input}."})
    agent = RemoteA2aAgent(name="helper", agent_card=server.card_url)
    runner = await started(InMemoryRunner(agent=agent, app_name="app"))
    asked = await turn(runner, "What's the weather?")
    [waiting] = await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)
    assert waiting.kind == "long_running" and waiting.author == "helper"
    assert waiting.name == "mock_function_call_for_required_user_input"
    assert waiting.args == {"input_required": "Which city?"}
    [reply] = records(asked, "reply")
    assert reply.long_running_tool_ids == {waiting.id}

    done = await turn(runner, answer(waiting.id, waiting.name, {"result": "Paris"}))
    assert texts(done, "helper") == ["Sunny in Paris."]
    assert await runner.list_pending_interrupts(user_id=USER, session_id=SESSION) == []
    first, second = server.received()
    assert second["text"] == "Paris"
    assert reply.custom_metadata is not None
    assert second["taskId"] == reply.custom_metadata["a2a:task_id"] != ""
    assert (
        first["contextId"] == "" and second["contextId"] == reply.custom_metadata["a2a:context_id"]
    )
    assert {e.invocation_id for e in done} == {waiting.invocation_id}  # the same invocation


async def test_auth_required_pauses_the_same_way(server: ScriptedA2aServer) -> None:
    server.script({"auth": "Sign in at https://example.test/login"}, {"answer": "signed in"})
    runner = await started(
        InMemoryRunner(
            agent=RemoteA2aAgent(name="helper", agent_card=server.card_url), app_name="app"
        )
    )
    await turn(runner, "my orders")
    [waiting] = await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)
    assert waiting.name == "mock_function_call_for_required_user_auth"
    assert waiting.args == {"auth_required": "Sign in at https://example.test/login"}
    done = await turn(runner, answer(waiting.id, waiting.name, {"result": "done"}))
    assert texts(done, "helper") == ["signed in"]
    assert server.received()[-1]["text"] == "done"


async def test_a_long_running_call_of_the_remote_is_answered_with_its_function_response(
    server: ScriptedA2aServer,
) -> None:
    call = {"id": "remote-call-1", "name": "approve_refund", "args": {"amount": 40}}
    server.script({"ask_call": call}, {"answer": "refunded"})
    runner = await started(
        InMemoryRunner(
            agent=RemoteA2aAgent(name="helper", agent_card=server.card_url), app_name="app"
        )
    )
    await turn(runner, "refund me")
    [waiting] = await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)
    assert (waiting.id, waiting.name, waiting.args) == (
        "remote-call-1",
        "approve_refund",
        {"amount": 40},
    )
    done = await turn(runner, answer(waiting.id, waiting.name, {"approved": True}))
    assert texts(done, "helper") == ["refunded"]
    [response] = server.received()[-1]["data"]
    assert response == {
        "id": "remote-call-1",
        "name": "approve_refund",
        "response": {"approved": True},
    }


async def test_the_pause_is_answered_after_a_local_restart_on_sqlite(
    server: ScriptedA2aServer, tmp_path: Path
) -> None:
    server.script({"ask": "Which city?"}, {"answer": "Sunny in {input}."})
    store = tmp_path / "sessions.db"
    before = await started(
        Runner(
            app_name="app",
            agent=RemoteA2aAgent(name="helper", agent_card=server.card_url),
            session_service=SqliteSessionService(store),
        )
    )
    await turn(before, "weather?")
    await before.close()
    await before.session_service.close()

    after = Runner(
        app_name="app",
        agent=RemoteA2aAgent(name="helper", agent_card=server.card_url),
        session_service=SqliteSessionService(store),
    )
    [waiting] = await after.list_pending_interrupts(user_id=USER, session_id=SESSION)
    done = await turn(after, answer(waiting.id, waiting.name, {"result": "Oslo"}))
    assert texts(done, "helper") == ["Sunny in Oslo."]
    stored = await after.session_service.get_session(
        app_name="app", user_id=USER, session_id=SESSION
    )
    assert stored is not None
    asked = records(stored.events, "reply")[0].custom_metadata or {}
    assert server.received()[-1]["text"] == "Oslo"
    assert server.received()[-1]["taskId"] == asked["a2a:task_id"] != ""
    await after.close()
    await after.session_service.close()


def test_the_pause_is_listed_and_answered_over_http(
    streaming_server: ScriptedA2aServer, tmp_path: Path
) -> None:
    server = streaming_server
    server.reset()
    server.script({"ask": "Which city?"}, {"answer": "Sunny in {input}."})
    env = {
        "CAIRN_AGENTS_DIR": str(AGENTS),
        "CAIRN_STORE": str(tmp_path / "sessions.db"),
        "SCRIPTED_A2A_CARD": server.card_url,
    }
    with (
        uvicorn_server(env, log=tmp_path / "server.log") as url,
        httpx.Client(base_url=url, timeout=BOUND_SECONDS) as api,
    ):
        api.post(
            "/apps/remote_helper/users/ada/sessions", json={"sessionId": "s"}
        ).raise_for_status()
        ran = api.post("/run", json=run_body("remote_helper", "s", "weather?"))
        ran.raise_for_status()
        assert ran.json() and named_records(ran.json()) == []  # as google-adk's /run gives
        session = "/cairn/apps/remote_helper/users/ada/sessions/s"
        [waiting] = api.get(session + "/interrupts").json()
        assert waiting["name"] == "mock_function_call_for_required_user_input"
        assert waiting["args"] == {"input_required": "Which city?"}
        answered = api.post(session + f"/interrupts/{waiting['id']}", json={"response": "Lima"})
        assert answered.status_code == 200
        events = [json.loads(p) for p in sse_payloads(answered.text)]
        said = [p.get("text") for e in events for p in e.get("content", {}).get("parts", [])]
        assert "Sunny in Lima." in said
        assert named_records(events) == []
        assert api.get(session + "/interrupts").json() == []
        # The log keeps the records: the session as read, and a run read from it again.
        kept = api.get("/apps/remote_helper/users/ada/sessions/s").json()["events"]
        assert set(named_records(kept)) == {"cairn_a2a_send_message", "cairn_a2a_await_task"}
        [first_run, *_] = reversed(api.get(session + "/runs").json()["runs"])
        streamed = api.get(session + f"/runs/{first_run['runId']}/stream").text
        blocks = [
            dict(line.split(": ", 1) for line in b.splitlines())
            for b in streamed.split("\n\n")
            if b
        ]
        *again, end = [json.loads(block["data"]) for block in blocks]
        assert end["status"] == "done" and named_records(again) == []
        given = [e["id"] for e in [*ran.json(), *events] if e["author"] != "user"]
        assert [e["id"] for e in again if e["author"] != "user"] == given  # as the run gave it
    assert server.received()[-1]["text"] == "Lima"


def named_records(events: list[dict[str, Any]]) -> list[str]:
    """The names of the record calls and responses in events as the HTTP API sends them."""
    found = []
    for event in events:
        for part in (event.get("content") or {}).get("parts") or []:
            named = part.get("functionCall") or part.get("functionResponse") or {}
            if named.get("name", "").startswith("cairn_a2a_"):
                found.append(named["name"])
    return found
