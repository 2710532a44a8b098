"""ADK's artifact routes over the server's artifact service."""

from __future__ import annotations

import httpx
from google.genai import types
from tests.server.harness import run_body, server_app

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
