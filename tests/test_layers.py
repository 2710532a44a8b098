"""The layers of ARCHITECTURE.md: a package imports only packages below it (or beside it
in the same row of the layer table).

ADK's module paths put some names one layer low (`google.adk.tools.tool_context` holds the
agents' `ToolContext`). cairn gives each such path an *address*: a module that only
re-exports (a docstring, imports and `__all__`, nothing else), which may name any layer.
A module that imports an address is checked against what the address imports, so an address
never carries a layer upwards; a package finds its addressed names lazily, through an
`_ADDRESSES` table of address modules (and names them for type checkers in a
`TYPE_CHECKING` block, which runs nothing).
"""

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
    "examples": 4,
    "skills": 6,
    "tools": 5,
    "agents": 6,
    "planners": 6,
    "code_executors": 6,
    "workflow": 7,
    "apps": 8,
    "plugins": 8,
    "runners": 8,
    "runs": 9,
    "cli": 10,
    "server": 10,
    "web": 10,
    "a2a": 10,
    "testing": 11,
    "utils": 8,
    "integrations": 8,
    "labs": 8,
    "version": 0,
    "lazy_names": 0,
    "serving_gc": 0,
    "evaluation": 10,
}
TOP_LEVEL_USERS = {"cli", "server", "web", "testing"}  # may import the `cairn` facade


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["cairn", *parts])


def is_address(tree: ast.Module) -> bool:
    """Only a docstring, imports and `__all__`: a module that re-exports at ADK's path."""
    for index, statement in enumerate(tree.body):
        if index == 0 and isinstance(statement, ast.Expr):
            continue
        if isinstance(statement, ast.ImportFrom):
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if [getattr(t, "id", None) for t in targets] != ["__all__"]:
            return False
    return any(isinstance(s, ast.ImportFrom) for s in tree.body)


TREES = {module_name(p): ast.parse(p.read_text(encoding="utf-8")) for p in SRC.rglob("*.py")}
ADDRESSES = {name for name, tree in TREES.items() if is_address(tree)}
PACKAGES = {module_name(p) for p in SRC.rglob("__init__.py")}
# A package's __init__ that re-exports its own modules has an address's shape but is held to
# the layers, unless the whole package is addresses (as cairn.tools.mcp_tool is).
EXEMPT = {
    name
    for name in ADDRESSES
    if name not in PACKAGES
    or all(m in ADDRESSES for m in TREES if m.startswith(name + ".") or m == name)
}


def imported_modules(tree: ast.Module, skip_type_checking: bool) -> set[str]:
    skipped = {
        id(node)
        for statement in tree.body
        if skip_type_checking
        and isinstance(statement, ast.If)
        and "TYPE_CHECKING" in ast.unparse(statement.test)
        for node in ast.walk(statement)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] == "cairn"}


def imported_cairn_packages(path: Path) -> set[str]:
    """The cairn packages a module imports, looking through the addresses it imports."""
    name = module_name(path)
    pending = list(imported_modules(TREES[name], skip_type_checking=path.name == "__init__.py"))
    seen: set[str] = set()
    packages: set[str] = set()
    while pending:
        module = pending.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        if module in ADDRESSES and module != name:
            pending.extend(imported_modules(TREES[module], skip_type_checking=True))
        else:
            packages.add(parts[1] if len(parts) > 1 else "")
    return packages


def test_lazy_addresses_are_addresses() -> None:
    wrong = []
    for name, tree in TREES.items():
        for statement in tree.body:
            if isinstance(statement, ast.Assign) and ast.unparse(statement.targets[0]) == (
                "_ADDRESSES"
            ):
                table = ast.literal_eval(statement.value)
                wrong += [f"{name}: {k} -> {v}" for k, v in table.items() if v not in ADDRESSES]
    assert wrong == []
    assert "cairn.tools.tool_context" in ADDRESSES


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
        if module_name(path) in EXEMPT:
            continue
        for target in imported_cairn_packages(path):
            if target == "":
                if package not in TOP_LEVEL_USERS:
                    violations.append(f"{relative} imports the cairn facade")
            elif LEVEL[target] > LEVEL[package]:
                violations.append(f"{relative} ({package}) imports cairn.{target}")
    assert violations == []
