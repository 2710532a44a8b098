"""Every public module path and name of google-adk 2.13.0 exists under `cairn`, or is pending.

tests/compat/adk_surface.json lists ADK's public modules and their names (made by
bench/adk_surface.py in ADK's own venv; cairn never imports google-adk).
tests/compat/adk_pending.toml names what cairn does not provide yet and why: a module path
under `[modules]` covers that module and everything below it; `module:Name` under `[names]`
covers one name. A porting user rewrites `google.adk` to `cairn`; these tests fail for any
path or name that is neither provided nor listed, and for a listed entry that is provided
after all (so the list stays true).
"""

from __future__ import annotations

import importlib
import json
import re
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parent
SURFACE: dict[str, list[str]] = json.loads((HERE / "adk_surface.json").read_text())["modules"]
PENDING = tomllib.loads((HERE / "adk_pending.toml").read_text())
PENDING_MODULES: dict[str, str] = PENDING.get("modules", {})
PENDING_NAMES: dict[str, str] = PENDING.get("names", {})
REASON = re.compile(r"^(issue \d+\b.*|not planned: .{10,}|cairn: .{10,})$")


def cairn_path(adk_path: str) -> str:
    return "cairn" + adk_path.removeprefix("google.adk")


def pending_module(adk_path: str) -> str | None:
    parts = adk_path.split(".")
    for end in range(len(parts), 2, -1):
        reason = PENDING_MODULES.get(".".join(parts[:end]))
        if reason is not None:
            return reason
    return None


def load(adk_path: str) -> ModuleType | str:
    try:
        return importlib.import_module(cairn_path(adk_path))
    except ImportError as error:
        return f"{type(error).__name__}: {error}"


def test_the_surface_is_google_adk_2_13() -> None:
    data = json.loads((HERE / "adk_surface.json").read_text())
    assert data["version"] == "2.13.0"
    assert len(SURFACE) > 500  # every public module, not a sample of them


def test_every_pending_entry_names_an_issue_or_a_reason() -> None:
    bad = [
        f"{key} = {reason!r}"
        for key, reason in [*PENDING_MODULES.items(), *PENDING_NAMES.items()]
        if not REASON.match(reason)
    ]
    assert bad == [], "a reason reads 'issue N ...', 'not planned: why' or 'cairn: ...'"


def test_every_pending_entry_is_an_adk_path() -> None:
    unknown = [m for m in PENDING_MODULES if m not in SURFACE]
    for key in PENDING_NAMES:
        module, _, name = key.partition(":")
        if name not in SURFACE.get(module, []):
            unknown.append(key)
    assert unknown == []


@pytest.mark.parametrize("adk_path", sorted(SURFACE))
def test_the_module_is_provided_or_pending(adk_path: str) -> None:
    module_reason = pending_module(adk_path)
    loaded = load(adk_path)
    if module_reason is not None:
        if not isinstance(loaded, str) and adk_path in PENDING_MODULES:
            names = [n for n in SURFACE[adk_path] if not hasattr(loaded, n)]
            assert names, f"{cairn_path(adk_path)} is provided: remove it from adk_pending.toml"
        return
    assert not isinstance(loaded, str), (
        f"`import {cairn_path(adk_path)}` fails ({loaded}); provide it, or list "
        f'"{adk_path}" in tests/compat/adk_pending.toml with the issue or reason'
    )
    missing = [
        name
        for name in SURFACE[adk_path]
        if not hasattr(loaded, name) and f"{adk_path}:{name}" not in PENDING_NAMES
    ]
    assert missing == [], (
        f"{cairn_path(adk_path)} lacks {missing}; provide them, or list each as "
        f'"{adk_path}:NAME" in tests/compat/adk_pending.toml'
    )
    stale = [
        name
        for name in SURFACE[adk_path]
        if hasattr(loaded, name) and f"{adk_path}:{name}" in PENDING_NAMES
    ]
    assert stale == [], f"provided, so remove from adk_pending.toml: {stale}"
