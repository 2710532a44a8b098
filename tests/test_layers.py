"""The layers of ARCHITECTURE.md: a package imports only packages below it (or beside it
in the same row of the layer table)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "cairn"

LEVEL = {
    "errors": 0,
    "telemetry": 0,
    "user_code": 0,
    "events": 1,
    "sessions": 2,
    "artifacts": 3,
    "memory": 3,
    "auth": 3,
    "models": 4,
    "tools": 5,
    "agents": 6,
    "workflow": 7,
    "apps": 8,
    "plugins": 8,
    "runners": 8,
    "cli": 9,
    "server": 9,
    "web": 9,
    "testing": 10,
}
TOP_LEVEL_USERS = {"cli", "server", "web", "testing"}  # may import the `cairn` facade


def imported_cairn_packages(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "cairn":
                found.add(parts[1] if len(parts) > 1 else "")
    return found


def test_every_package_has_a_layer() -> None:
    packages = {p.stem if p.is_file() else p.name for p in SRC.iterdir()}
    packages -= {"__init__", "__pycache__", "py"}
    packages = {p for p in packages if not p.startswith(".")}
    assert packages <= set(LEVEL), f"unknown packages: {packages - set(LEVEL)}"


def test_layers_import_only_downwards() -> None:
    violations = []
    for path in SRC.rglob("*.py"):
        relative = path.relative_to(SRC)
        if relative.parts == ("__init__.py",):
            continue
        package = relative.parts[0].removesuffix(".py")
        for target in imported_cairn_packages(path):
            if target == "":
                if package not in TOP_LEVEL_USERS:
                    violations.append(f"{relative} imports the cairn facade")
            elif LEVEL[target] > LEVEL[package]:
                violations.append(f"{relative} ({package}) imports cairn.{target}")
    assert violations == []
