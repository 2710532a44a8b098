"""ADK's artifact names beside the services: ensure_part, and FileArtifactService's versions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.genai import types

from cairn.artifacts import FileArtifactService, InMemoryArtifactService
from cairn.artifacts.base_artifact_service import ensure_part
from cairn.artifacts.file_artifact_service import FileArtifactVersion


def test_ensure_part_validates_a_dict_and_keeps_a_part() -> None:
    part = types.Part(text="hi")
    assert ensure_part(part) is part
    made = ensure_part({"inline_data": {"mime_type": "image/png", "data": b"\x89PNG"}})
    assert made.inline_data is not None and made.inline_data.mime_type == "image/png"


async def test_a_dict_in_the_shape_of_a_part_is_saved_as_that_part() -> None:
    service = InMemoryArtifactService()
    artifact: Any = {"text": "from JSON"}
    version = await service.save_artifact(
        app_name="a", user_id="u", session_id="s", filename="note.txt", artifact=artifact
    )
    loaded = await service.load_artifact(
        app_name="a", user_id="u", session_id="s", filename="note.txt", version=version
    )
    assert loaded == types.Part(text="from JSON")


async def test_file_versions_name_the_file_they_were_saved_under(tmp_path: Path) -> None:
    service = FileArtifactService(root_dir=tmp_path)
    for name in ("report.txt", "user:avatar.png"):
        await service.save_artifact(
            app_name="a", user_id="u", session_id="s", filename=name, artifact=types.Part(text="x")
        )
        versions = await service.list_artifact_versions(
            app_name="a", user_id="u", session_id="s", filename=name
        )
        assert [type(v) for v in versions] == [FileArtifactVersion]
        assert isinstance(versions[0], FileArtifactVersion) and versions[0].file_name == name
