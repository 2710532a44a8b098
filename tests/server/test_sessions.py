"""ADK's session routes: the JSON equals what the Python API returns, and errors are typed."""

from __future__ import annotations

import httpx
from tests.server.harness import run_body, server_app

from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.lease import SessionLease

BASE = "/apps/echo/users/ada/sessions"


def store(api: httpx.AsyncClient) -> BaseSessionService:
    service: BaseSessionService = server_app(api).state.cairn.sessions
    return service


async def python_session(api: httpx.AsyncClient, session_id: str) -> object:
    session = await store(api).get_session(app_name="echo", user_id="ada", session_id=session_id)
    assert session is not None
    return session.model_dump(mode="json", by_alias=True, exclude_none=True)


async def test_list_apps_names_every_app_directory_sorted(api: httpx.AsyncClient) -> None:
    response = await api.get("/list-apps")
    assert response.json() == ["clerk", "echo", "memo", "review", "streamer"]
    assert response.headers["x-cairn-worker"].isdigit()


async def test_create_get_list_delete_match_the_python_api(api: httpx.AsyncClient) -> None:
    created = await api.post(BASE, json={"sessionId": "s1", "state": {"topic": "tea"}})
    assert created.status_code == 200
    assert created.json() == await python_session(api, "s1")
    assert created.json()["state"] == {"topic": "tea"}
    await api.post("/run", json=run_body("echo", "s1", "hello"))
    got = await api.get(BASE + "/s1")
    assert got.json() == await python_session(api, "s1")
    assert [e["author"] for e in got.json()["events"]] == ["user", "echo"]
    listed = await api.get(BASE)
    assert [s["id"] for s in listed.json()] == ["s1"]
    assert listed.json()[0]["events"] == []
    deleted = await api.delete(BASE + "/s1")  # ADK's answer: 200, a null body
    assert deleted.status_code == 200 and deleted.json() is None
    assert (await api.get(BASE + "/s1")).status_code == 404
    assert (await api.delete(BASE + "/s1")).status_code == 200  # as in ADK: nothing to do
    assert (await api.delete("/apps/nope/users/ada/sessions/s1")).status_code == 404


async def test_create_with_a_generated_id_events_and_an_empty_body(api: httpx.AsyncClient) -> None:
    bare = await api.post(BASE)
    assert bare.status_code == 200 and bare.json()["id"]
    event = {"author": "user", "invocationId": "e-1", "actions": {"stateDelta": {"k": 1}}}
    seeded = await api.post(BASE, json={"events": [event]})
    assert seeded.json()["state"] == {"k": 1}
    assert [e["invocationId"] for e in seeded.json()["events"]] == ["e-1"]


async def test_create_with_id_in_the_path(api: httpx.AsyncClient) -> None:
    # As in ADK, the body is the state itself.
    response = await api.post(BASE + "/chosen", json={"a": 1, "user:b": 2})
    assert response.json()["id"] == "chosen" and response.json()["state"] == {"a": 1, "user:b": 2}
    assert (await api.post(BASE + "/other")).json()["id"] == "other"


async def test_a_taken_session_id_is_409(api: httpx.AsyncClient) -> None:
    await api.post(BASE, json={"sessionId": "s1"})
    again = await api.post(BASE, json={"sessionId": "s1"})
    assert again.status_code == 409 and "already exists" in again.json()["detail"]
    assert (await api.post(BASE + "/s1")).status_code == 409


async def test_patch_appends_a_user_event_with_the_delta(api: httpx.AsyncClient) -> None:
    await api.post(BASE, json={"sessionId": "s1", "state": {"a": 1}})
    patched = await api.patch(BASE + "/s1", json={"stateDelta": {"b": 2, "user:c": 3}})
    assert patched.status_code == 200
    assert patched.json()["state"] == {"a": 1, "b": 2, "user:c": 3}
    (event,) = patched.json()["events"]
    assert event["author"] == "user"
    assert event["actions"]["stateDelta"] == {"b": 2, "user:c": 3}
    assert patched.json() == await python_session(api, "s1")


async def test_patch_while_an_invocation_holds_the_session_is_409(
    api: httpx.AsyncClient,
) -> None:
    await api.post(BASE, json={"sessionId": "s1"})
    taken = await store(api).acquire_session_lease(
        app_name="echo", user_id="ada", session_id="s1", holder="someone", ttl=30
    )
    assert isinstance(taken, SessionLease)
    busy = await api.patch(BASE + "/s1", json={"stateDelta": {"b": 2}})
    assert busy.status_code == 409 and "busy" in busy.json()["detail"]


async def test_unknown_app_and_session_are_404(api: httpx.AsyncClient) -> None:
    unknown_app = await api.get("/apps/nope/users/ada/sessions")
    assert unknown_app.status_code == 404 and "'nope'" in unknown_app.json()["detail"]
    assert (await api.post("/apps/nope/users/ada/sessions")).status_code == 404
    assert (await api.get(BASE + "/missing")).status_code == 404
    assert (await api.patch(BASE + "/missing", json={"stateDelta": {}})).status_code == 404
    assert (await api.get("/apps/echo/users/nobody/sessions")).json() == []


async def test_invalid_bodies_are_422_naming_the_field(api: httpx.AsyncClient) -> None:
    bad_state = await api.post(BASE, json={"state": "not an object"})
    assert bad_state.status_code == 422
    assert bad_state.json()["detail"][0]["loc"] == ["body", "state"]
    missing = await api.patch(BASE + "/x", json={})
    assert missing.status_code == 422
    assert missing.json()["detail"][0]["loc"] == ["body", "stateDelta"]
    unknown = await api.post(BASE, json={"sessionID": "x"})
    assert unknown.status_code == 422 and unknown.json()["detail"][0]["loc"][-1] == "sessionID"
    nan = await api.post(
        BASE, content=b'{"state": {"bad": NaN}}', headers={"content-type": "application/json"}
    )
    assert nan.status_code == 422 and "'bad'" in nan.json()["detail"]


async def test_patch_removes_keys_in_the_same_event(api: httpx.AsyncClient) -> None:
    await api.post(BASE, json={"sessionId": "s1", "state": {"a": 1, "b": 2, "user:c": 3}})
    patched = await api.patch(
        BASE + "/s1", json={"stateDelta": {"a": 10}, "removedStateKeys": ["b", "user:c"]}
    )
    assert patched.status_code == 200
    assert patched.json()["state"] == {"a": 10}
    (event,) = patched.json()["events"]
    assert event["author"] == "user"
    assert event["actions"]["removedStateKeys"] == ["b", "user:c"]
    assert patched.json() == await python_session(api, "s1")
    verified = await api.get("/cairn" + BASE + "/s1/verify")
    assert verified.json() == {"ok": True, "differences": []}


async def test_patch_refuses_a_key_both_set_and_removed_and_stores_nothing(
    api: httpx.AsyncClient,
) -> None:
    await api.post(BASE, json={"sessionId": "s1", "state": {"a": 1}})
    both = await api.patch(BASE + "/s1", json={"stateDelta": {"a": 2}, "removedStateKeys": ["a"]})
    assert both.status_code == 422 and "'a'" in both.json()["detail"][0]["msg"]
    session = (await api.get(BASE + "/s1")).json()
    assert session["state"] == {"a": 1} and session["events"] == []
