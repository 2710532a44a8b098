"""FileArtifactService refuses names that could reach outside its root; it writes atomically."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from google.genai import types

from cairn.artifacts import FileArtifactService, InvalidArtifactNameError

UNSAFE = ["../x", "..", "/etc/passwd", "a/b", "a\\b", "a\x00b", "", "user:../x", "x/../../y"]


def everything_under(path: Path) -> set[Path]:
    return set(path.rglob("*")) if path.exists() else set()


@pytest.mark.parametrize("filename", UNSAFE)
async def test_unsafe_filenames_are_refused_and_nothing_is_written(
    tmp_path: Path, filename: str
) -> None:
    root = tmp_path / "root"
    service = FileArtifactService(root)
    outside_before = everything_under(tmp_path) - everything_under(root)
    for operation in ("save", "load", "delete", "versions"):
        with pytest.raises(InvalidArtifactNameError) as raised:
            if operation == "save":
                await service.save_artifact(
                    app_name="app",
                    user_id="u",
                    session_id="s",
                    filename=filename,
                    artifact=types.Part(text="x"),
                )
            elif operation == "load":
                await service.load_artifact(
                    app_name="app", user_id="u", session_id="s", filename=filename
                )
            elif operation == "delete":
                await service.delete_artifact(
                    app_name="app", user_id="u", session_id="s", filename=filename
                )
            else:
                await service.list_versions(
                    app_name="app", user_id="u", session_id="s", filename=filename
                )
        message = str(raised.value)
        assert repr(filename)[1:-1][:5] in message and "refused" in message
    assert everything_under(root) == set()
    assert everything_under(tmp_path) - everything_under(root) == outside_before


@pytest.mark.parametrize("field", ["app_name", "user_id", "session_id"])
@pytest.mark.parametrize("value", ["..", "../up", "a/b", "/abs"])
async def test_unsafe_ids_are_refused(tmp_path: Path, field: str, value: str) -> None:
    service = FileArtifactService(tmp_path / "root")
    names = {"app_name": "app", "user_id": "u", "session_id": "s", field: value}
    with pytest.raises(
        InvalidArtifactNameError, match=field.replace("_name", " name").replace("_id", " id")
    ):
        await service.save_artifact(filename="ok.txt", artifact=types.Part(text="x"), **names)
    assert everything_under(tmp_path / "root") == set()


async def test_error_names_the_rule(tmp_path: Path) -> None:
    service = FileArtifactService(tmp_path)
    with pytest.raises(InvalidArtifactNameError, match=r"'a/b' is refused: .*path separator"):
        await service.save_artifact(
            app_name="a", user_id="u", session_id="s", filename="a/b", artifact=types.Part(text="")
        )
    with pytest.raises(InvalidArtifactNameError, match=r"must not contain '\.\.'"):
        await service.save_artifact(
            app_name="a", user_id="u", session_id="s", filename="..", artifact=types.Part(text="")
        )


async def test_a_symlink_out_of_the_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "app" / "u" / "sessions" / "s").mkdir(parents=True)
    os.symlink(outside, root / "app" / "u" / "sessions" / "s" / "link")
    service = FileArtifactService(root)
    with pytest.raises(InvalidArtifactNameError, match="outside the artifact root"):
        await service.save_artifact(
            app_name="app",
            user_id="u",
            session_id="s",
            filename="link",
            artifact=types.Part(text=""),
        )
    assert list(outside.iterdir()) == []


async def test_no_temporary_files_are_left_and_an_unfinished_version_is_invisible(
    tmp_path: Path,
) -> None:
    service = FileArtifactService(tmp_path)
    ids = {"app_name": "app", "user_id": "u", "session_id": "s", "filename": "r.txt"}
    await service.save_artifact(artifact=types.Part(text="v0"), **ids)  # type: ignore[arg-type]
    assert not [p for p in tmp_path.rglob(".tmp-*")]
    # A writer that claimed version 1 and died before its metadata was in place.
    (tmp_path / "app" / "u" / "sessions" / "s" / "r.txt" / "1").mkdir()
    assert await service.list_versions(**ids) == [0]
    assert await service.load_artifact(**ids) == types.Part(text="v0")
    assert await service.save_artifact(artifact=types.Part(text="v2"), **ids) == 2  # type: ignore[arg-type]
    assert await service.load_artifact(**ids) == types.Part(text="v2")


async def test_user_scoped_artifacts_live_under_the_user(tmp_path: Path) -> None:
    service = FileArtifactService(tmp_path)
    await service.save_artifact(
        app_name="app",
        user_id="u",
        session_id="s",
        filename="user:cv.txt",
        artifact=types.Part(text="cv"),
    )
    assert (tmp_path / "app" / "u" / "user" / "cv.txt" / "0" / "data").read_bytes() == b"cv"
