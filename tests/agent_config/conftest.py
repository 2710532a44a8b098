"""``service``: a session store, in memory and in a SQLite file. ``write_config``: an agent
folder in tmp_path (with a unique, importable name) holding the given YAML files and Python
modules; its parent is on sys.path for the test."""

from __future__ import annotations

import sys
import textwrap
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.sessions import BaseSessionService, InMemorySessionService, SqliteSessionService

WriteConfig = Callable[..., Path]


@pytest.fixture
def write_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WriteConfig]:
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(root: str, **files: str) -> Path:
        """Write ``root`` as root_agent.yaml and each ``files`` entry (``helpers_py`` is
        helpers.py, ``sub__a_yaml`` is sub/a.yaml); ``{pkg}`` in any of them is the folder's
        (importable) name. Returns the root_agent.yaml path."""
        folder = tmp_path / f"cfg_{uuid.uuid4().hex[:10]}"
        folder.mkdir()

        def text_of(source: str) -> str:
            return textwrap.dedent(source).lstrip().replace("{pkg}", folder.name)

        (folder / "root_agent.yaml").write_text(text_of(root))
        for key, text in files.items():
            name = key.replace("__", "/")
            stem, _, suffix = name.rpartition("_")
            path = folder / f"{stem}.{suffix}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text_of(text))
        return folder / "root_agent.yaml"

    yield write
    for name in [n for n in sys.modules if n.startswith("cfg_")]:
        del sys.modules[name]


@pytest.fixture(params=["memory", "sqlite"])
async def service(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    store: BaseSessionService = (
        SqliteSessionService(tmp_path / "s.db")
        if request.param == "sqlite"
        else InMemorySessionService()
    )
    yield store
    await store.close()
