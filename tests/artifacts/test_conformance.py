"""The artifact contract, written once and run on every store."""

from __future__ import annotations

import asyncio
import os

from google.genai import types
from tests.artifacts.conftest import OpenService

from cairn.artifacts import ArtifactVersion, BaseArtifactService

APP, USER, SESSION = "app", "alice", "s1"


def text(value: str) -> types.Part:
    return types.Part(text=value)


def blob(data: bytes, mime_type: str = "application/octet-stream") -> types.Part:
    return types.Part(inline_data=types.Blob(data=data, mime_type=mime_type))


async def save(
    service: BaseArtifactService,
    filename: str,
    artifact: types.Part,
    *,
    app: str = APP,
    user: str = USER,
    session: str | None = SESSION,
    **more: object,
) -> int:
    return await service.save_artifact(
        app_name=app,
        user_id=user,
        session_id=session,
        filename=filename,
        artifact=artifact,
        **more,  # type: ignore[arg-type]
    )


async def load(
    service: BaseArtifactService,
    filename: str,
    *,
    app: str = APP,
    user: str = USER,
    session: str | None = SESSION,
    version: int | None = None,
) -> types.Part | None:
    return await service.load_artifact(
        app_name=app, user_id=user, session_id=session, filename=filename, version=version
    )


async def keys(
    service: BaseArtifactService, *, app: str = APP, user: str = USER, session: str | None = SESSION
) -> list[str]:
    return await service.list_artifact_keys(app_name=app, user_id=user, session_id=session)


async def test_versions_start_at_zero_and_increase(service: BaseArtifactService) -> None:
    assert [await save(service, "report.txt", text(f"v{i}")) for i in range(3)] == [0, 1, 2]
    assert await service.list_versions(
        app_name=APP, user_id=USER, session_id=SESSION, filename="report.txt"
    ) == [0, 1, 2]
    assert await save(service, "other.txt", text("x")) == 0


async def test_load_latest_specific_and_missing(service: BaseArtifactService) -> None:
    await save(service, "report.txt", text("first"))
    await save(service, "report.txt", text("second"))
    assert await load(service, "report.txt") == text("second")
    assert await load(service, "report.txt", version=0) == text("first")
    assert await load(service, "report.txt", version=1) == text("second")
    assert await load(service, "report.txt", version=7) is None
    assert await load(service, "missing.txt") is None
    assert await load(service, "missing.txt", version=0) is None


async def test_binary_data_round_trips_exactly(service: BaseArtifactService) -> None:
    data = bytes(range(256)) * 64 + b"\x00\xff\x00" + os.urandom(70_000)
    await save(service, "image.png", blob(data, "image/png"))
    loaded = await load(service, "image.png")
    assert loaded is not None and loaded.inline_data is not None
    assert loaded.inline_data.data == data
    assert loaded.inline_data.mime_type == "image/png"
    await save(service, "empty.bin", blob(b""))
    empty = await load(service, "empty.bin")
    assert empty is not None and empty.inline_data is not None
    assert empty.inline_data.data in (b"", None)
    unicode = "naïve ☃ 漢字 \U0001f600 trailing  "
    await save(service, "notes.md", text(unicode))
    assert await load(service, "notes.md") == text(unicode)


async def test_list_keys_sees_the_session_and_the_user_scope(
    service: BaseArtifactService,
) -> None:
    await save(service, "b.txt", text("b"))
    await save(service, "a.txt", text("a"))
    await save(service, "a.txt", text("a2"))
    await save(service, "user:profile.json", text("{}"))
    await save(service, "elsewhere.txt", text("x"), session="s2")
    assert await keys(service) == ["a.txt", "b.txt", "user:profile.json"]
    assert await keys(service, session="s2") == ["elsewhere.txt", "user:profile.json"]
    assert await keys(service, session="s3") == ["user:profile.json"]
    assert await keys(service, session=None) == ["user:profile.json"]


async def test_user_scoped_artifacts_are_shared_by_the_users_sessions(
    service: BaseArtifactService,
) -> None:
    assert await save(service, "user:profile.json", text("v0"), session="s1") == 0
    assert await save(service, "user:profile.json", text("v1"), session="s2") == 1
    assert await load(service, "user:profile.json", session="s3") == text("v1")
    assert await load(service, "user:profile.json", session=None, version=0) == text("v0")
    assert await load(service, "user:profile.json", user="bob") is None


async def test_no_session_means_user_scope(service: BaseArtifactService) -> None:
    assert await save(service, "user:cv.txt", text("cv"), session=None) == 0
    assert await load(service, "user:cv.txt", session="any") == text("cv")


async def test_delete_removes_every_version(service: BaseArtifactService) -> None:
    for i in range(3):
        await save(service, "report.txt", text(f"v{i}"))
    await save(service, "keep.txt", text("k"))
    await service.delete_artifact(
        app_name=APP, user_id=USER, session_id=SESSION, filename="report.txt"
    )
    assert await load(service, "report.txt") is None
    assert await load(service, "report.txt", version=0) is None
    assert await keys(service) == ["keep.txt"]
    assert (
        await service.list_versions(
            app_name=APP, user_id=USER, session_id=SESSION, filename="report.txt"
        )
        == []
    )
    # Deleting what is not there is fine; saving again starts at version 0.
    await service.delete_artifact(
        app_name=APP, user_id=USER, session_id=SESSION, filename="report.txt"
    )
    assert await save(service, "report.txt", text("again")) == 0


async def test_custom_metadata_and_versions_are_described(service: BaseArtifactService) -> None:
    metadata = {"author": "alice", "pages": 3, "tags": ["a", "b"], "nested": {"ok": True}}
    await save(service, "report.pdf", blob(b"%PDF", "application/pdf"), custom_metadata=metadata)
    await save(service, "report.pdf", text("plain"))
    found = await service.list_artifact_versions(
        app_name=APP, user_id=USER, session_id=SESSION, filename="report.pdf"
    )
    assert [v.version for v in found] == [0, 1]
    assert found[0].custom_metadata == metadata and found[1].custom_metadata == {}
    assert found[0].mime_type == "application/pdf" and found[1].mime_type == "text/plain"
    assert found[0].create_time <= found[1].create_time
    latest = await service.get_artifact_version(
        app_name=APP, user_id=USER, session_id=SESSION, filename="report.pdf"
    )
    assert isinstance(latest, ArtifactVersion) and latest.version == 1
    first = await service.get_artifact_version(
        app_name=APP, user_id=USER, session_id=SESSION, filename="report.pdf", version=0
    )
    assert first is not None and first.custom_metadata == metadata
    missing = await service.get_artifact_version(
        app_name=APP, user_id=USER, session_id=SESSION, filename="report.pdf", version=9
    )
    assert missing is None


async def test_apps_users_and_sessions_are_isolated(service: BaseArtifactService) -> None:
    await save(service, "report.txt", text("alice s1"))
    await save(service, "report.txt", text("bob s1"), user="bob")
    await save(service, "report.txt", text("other app"), app="app2")
    await save(service, "report.txt", text("alice s2"), session="s2")
    await save(service, "user:p.txt", text("bob's"), user="bob")
    assert await load(service, "report.txt") == text("alice s1")
    assert await load(service, "report.txt", user="bob") == text("bob s1")
    assert await load(service, "report.txt", app="app2") == text("other app")
    assert await load(service, "report.txt", session="s2") == text("alice s2")
    assert await load(service, "user:p.txt") is None
    assert await keys(service, user="carol") == []
    # Names that differ only by case or trailing spaces are different names.
    await save(service, "Report.txt", text("upper"))
    await save(service, "report.txt ", text("spaced"))
    assert await load(service, "report.txt") == text("alice s1")
    assert await load(service, "Report.txt") == text("upper")
    assert await load(service, "report.txt ") == text("spaced")
    assert await load(service, "report.txt", user="Alice") is None


async def test_concurrent_saves_get_distinct_versions(open_service: OpenService) -> None:
    services = [open_service() for _ in range(3)]  # as if from three processes

    async def saves(service: BaseArtifactService, writer: int) -> list[int]:
        return [await save(service, "log.txt", text(f"{writer}-{i}")) for i in range(4)]

    results = await asyncio.gather(
        *(saves(services[n % 3], n) for n in range(6))  # six writers, two per "process"
    )
    versions = sorted(v for found in results for v in found)
    assert versions == list(range(24))
    service = services[0]
    stored = await service.list_versions(
        app_name=APP, user_id=USER, session_id=SESSION, filename="log.txt"
    )
    assert stored == list(range(24))
    # Each version holds what its writer saved.
    for writer, found in enumerate(results):
        for i, version in enumerate(found):
            assert await load(service, "log.txt", version=version) == text(f"{writer}-{i}")


async def test_a_new_service_on_the_same_place_sees_the_artifacts(
    open_service: OpenService,
) -> None:
    await save(open_service(), "report.txt", text("saved"))
    assert await load(open_service(), "report.txt") == text("saved")
