"""``import cairn`` is cheap: the everyday names are imported from their layers when first
asked for, so ``import cairn`` pulls no store, server or model provider's SDK."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import cairn

NOT_IMPORTED = (
    "sqlalchemy",
    "aiosqlite",
    "asyncpg",
    "fastapi",
    "starlette",
    "uvicorn",
    "httpx",
    "aiohttp",
    "google.genai",
    "anthropic",
    "openai",
    "litellm",
    "jsonschema",
    "temporalio",
)
PACKAGES = (
    "events",
    "sessions",
    "artifacts",
    "memory",
    "auth",
    "auth.credential_service",
    "models",
    "tools",
    "agents",
    "workflow",
    "apps",
    "plugins",
    "runners",
)


def fresh(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout


def test_import_cairn_pulls_no_store_server_or_provider_sdk() -> None:
    loaded = json.loads(fresh("import json, sys, cairn; print(json.dumps(sorted(sys.modules)))"))
    pulled = sorted(
        m for m in loaded for top in NOT_IMPORTED if m == top or m.startswith(top + ".")
    )
    assert pulled == []
    assert sorted(m for m in loaded if m.startswith("cairn")) == ["cairn", "cairn.version"]


def test_an_in_memory_app_needs_no_store_or_server_package() -> None:
    code = (
        "import json, sys\n"
        "from cairn import Agent, InMemoryRunner, InMemorySessionService, InMemoryMemoryService\n"
        "from cairn import InMemoryArtifactService, InMemoryCredentialService, Workflow\n"
        "InMemoryRunner(agent=Agent(name='a', model='gemini-2.5-flash'), app_name='app')\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    loaded = json.loads(fresh(code))
    heavy = ("sqlalchemy", "aiosqlite", "asyncpg", "fastapi", "starlette", "uvicorn", "jsonschema")
    assert sorted(m for m in loaded if m.split(".")[0] in heavy) == []


def test_the_sql_stores_resolve_from_their_packages() -> None:
    code = (
        "from cairn.sessions import SqliteSessionService, DatabaseSessionService, SchemaError\n"
        "from cairn.sessions import UnsupportedStoreUrlError\n"
        "from cairn.memory import PostgresMemoryService, SemanticSqliteMemoryService\n"
        "from cairn.artifacts import SessionStoreArtifactService\n"
        "from cairn.auth import SessionStoreCredentialService\n"
        "print(SqliteSessionService.__module__)"
    )
    assert fresh(code).strip() == "cairn.sessions.sqlite_session_service"


def test_every_public_name_resolves_in_a_fresh_process() -> None:
    code = "import cairn; print(sum(getattr(cairn, n) is not None for n in cairn.__all__))"
    assert int(fresh(code)) == len(cairn.__all__)


@pytest.mark.parametrize("name", sorted(cairn.__all__))
def test_each_public_name_is_its_layers_object(name: str) -> None:
    value = getattr(cairn, name)
    home = cairn._LAZY.get(name)
    if home is not None:
        assert value is getattr(importlib.import_module(home), name)
    assert name in dir(cairn)


def test_from_import_of_every_name_works() -> None:
    names = ", ".join(cairn.__all__)
    assert fresh(f"from cairn import {names}; print('ok')").strip() == "ok"


@pytest.mark.parametrize("package", PACKAGES)
def test_a_layers_package_is_an_attribute_of_cairn(package: str) -> None:
    code = f"import cairn; print(cairn.{package}.__name__)"
    assert fresh(code).strip() == f"cairn.{package}"
    module = importlib.import_module(f"cairn.{package}")
    assert all(getattr(module, name) is not None for name in module.__all__)
    assert set(module.__all__) <= set(dir(module))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'cairn' has no attribute 'Nope'"):
        cairn.Nope  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        cairn.nothing_here  # noqa: B018
    assert not hasattr(cairn, "_private")
