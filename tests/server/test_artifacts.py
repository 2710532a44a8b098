"""ADK's artifact routes over the server's artifact service."""

from __future__ import annotations

import base64

import httpx
from google.genai import types
from tests.server.harness import run_body, server_app

from cairn.sessions.lease import SessionLease

BASE = "/apps/echo/users/ada/sessions/s/artifacts"


async def test_artifacts_saved_by_an_agent_are_listed_loaded_and_deleted(
    api: httpx.AsyncClient,
) -> None:
    await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "s"})
    await api.post("/run", json=run_body("echo", "s", "save first"))
    await api.post("/run", json=run_body("echo", "s", "save second"))
    service = server_app(api).state.cairn.services.artifact_service
    blob = types.Part(inline_data=types.Blob(data=b"\x00\x01", mime_type="image/png"))
    await service.save_artifact(
        app_name="echo", user_id="ada", session_id="s", filename="pic.png", artifact=blob
    )
    assert (await api.get(BASE)).json() == ["note.txt", "pic.png"]
    assert (await api.get(BASE + "/note.txt")).json() == {"text": "second"}
    assert (await api.get(BASE + "/note.txt", params={"version": 0})).json() == {"text": "first"}
    assert (await api.get(BASE + "/note.txt/versions")).json() == [0, 1]
    assert (await api.get(BASE + "/note.txt/versions/0")).json() == {"text": "first"}
    picture = (await api.get(BASE + "/pic.png")).json()
    assert picture == blob.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert picture["inlineData"]["mimeType"] == "image/png"
    deleted = await api.delete(BASE + "/note.txt")  # ADK's answer: 200, a null body
    assert deleted.status_code == 200 and deleted.json() is None
    assert (await api.get(BASE)).json() == ["pic.png"]


async def test_missing_artifacts_versions_and_sessions_are_404(api: httpx.AsyncClient) -> None:
    await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "s"})
    assert (await api.get(BASE)).json() == []
    for path in ("/none.txt", "/none.txt/versions", "/none.txt/versions/3"):
        response = await api.get(BASE + path)
        assert response.status_code == 404 and "'none.txt'" in response.json()["detail"]
    assert (await api.delete(BASE + "/none.txt")).status_code == 200  # as in ADK: nothing to do
    other = "/apps/echo/users/ada/sessions/other/artifacts"
    assert (await api.get(other)).status_code == 404
    negative = await api.get(BASE + "/x", params={"version": -1})
    assert negative.status_code == 422 and negative.json()["detail"][0]["loc"] == [
        "query",
        "version",
    ]


CAIRN = "/cairn" + BASE


async def test_an_uploaded_file_is_the_next_version_and_an_event_names_it(
    api: httpx.AsyncClient,
) -> None:
    await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "s"})
    await api.post("/run", json=run_body("echo", "s", "save first"))
    png = base64.b64encode(b"\x89PNG\r\n").decode()
    upload = {"filename": "note.txt", "artifact": {"text": "uploaded"}}
    answer = await api.post(CAIRN, json=upload)
    assert answer.status_code == 200
    assert answer.json()["filename"] == "note.txt" and answer.json()["version"] == 1
    picture = {
        "filename": "user:pic.png",
        "artifact": {"inlineData": {"mimeType": "image/png", "data": png}},
    }
    assert (await api.post(CAIRN, json=picture)).json()["version"] == 0
    assert (await api.get(BASE + "/note.txt")).json() == {"text": "uploaded"}
    assert (await api.get(BASE + "/user:pic.png")).json()["inlineData"]["data"] == png

    session = (await api.get("/apps/echo/users/ada/sessions/s")).json()
    uploads = [
        e for e in session["events"] if e["author"] == "user" and e["actions"]["artifactDelta"]
    ]
    assert [e["actions"]["artifactDelta"] for e in uploads] == [
        {"note.txt": 1},
        {"user:pic.png": 0},
    ]
    assert uploads[0]["id"] == answer.json()["eventId"]

    listed = (await api.get(CAIRN)).json()
    assert [(a["filename"], a["scope"]) for a in listed] == [
        ("note.txt", "session"),
        ("user:pic.png", "user"),
    ]
    assert [v["version"] for v in listed[0]["versions"]] == [0, 1]
    assert listed[1]["versions"][0].get("mimeType") == "image/png", listed
    # A user: artifact is the user's: another session of theirs lists it too.
    await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "t"})
    other = (await api.get("/cairn/apps/echo/users/ada/sessions/t/artifacts")).json()
    assert [a["filename"] for a in other] == ["user:pic.png"]


async def test_an_upload_that_is_too_large_busy_or_bad_saves_nothing(
    api: httpx.AsyncClient,
) -> None:
    await api.post("/apps/echo/users/ada/sessions", json={"sessionId": "s"})
    service = server_app(api).state.cairn.sessions
    limit = server_app(api).state.cairn.settings.max_body_bytes
    big = {"filename": "big.bin", "artifact": {"text": "x" * limit}}
    too_large = await api.post(CAIRN, json=big)
    assert too_large.status_code == 413 and "limit" in too_large.json()["detail"]
    no_part = await api.post(CAIRN, json={"filename": "x.txt", "artifact": {}})
    assert no_part.status_code == 422
    bad_base64 = {"filename": "x.bin", "artifact": {"inlineData": {"data": "not base64!"}}}
    assert (await api.post(CAIRN, json=bad_base64)).status_code == 422
    held = await service.acquire_session_lease(
        app_name="echo", user_id="ada", session_id="s", holder="a-run", ttl=30
    )
    assert isinstance(held, SessionLease)
    busy = await api.post(CAIRN, json={"filename": "x.txt", "artifact": {"text": "x"}})
    assert busy.status_code == 409 and "busy" in busy.json()["detail"]
    assert (await api.get(BASE)).json() == []
    assert (await api.get("/apps/echo/users/ada/sessions/s")).json()["events"] == []
    missing = await api.post(
        "/cairn/apps/echo/users/ada/sessions/none/artifacts", json=big | {"artifact": {"text": "x"}}
    )
    assert missing.status_code == 404
