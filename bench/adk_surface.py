"""The public surface of google-adk 2.13.0, written to tests/compat/adk_surface.json.

    .venv/bin/python bench/adk_surface.py [--no-install]

Run from the project's venv, it makes (or reuses) bench/.peers/adk with bench/peers.py's
`ensure_venv`, then runs itself inside that venv with `--dump`, where it reads the installed
`google/adk` package: every module whose dotted path has no part starting with `_` is
public. Each is imported; its public names are its `__all__` when it has one (for a
package, with the classes and functions it imports from its own modules), else the
classes and functions it defines or assigns at top level. A module that cannot be imported
in that venv (an optional dependency missing) is read without importing it: its literal
`__all__`, else the classes, functions and assignments at its top level. The JSON maps
each public module to its sorted names. cairn never imports google-adk:
tests/compat/test_adk_surface.py reads the JSON and checks that cairn provides every path
and name, or that tests/compat/adk_pending.toml says which issue or reason keeps it out.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
OUTPUT = BENCH.parent / "tests" / "compat" / "adk_surface.json"


def literal_names(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.List | ast.Tuple):
        values = [item.value for item in node.elts if isinstance(item, ast.Constant)]
        if len(values) == len(node.elts) and all(isinstance(v, str) for v in values):
            return [str(v) for v in values]
    return None


def is_type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def public_names(tree: ast.Module, is_package: bool) -> list[str]:
    declared: list[str] | None = None
    defined: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    if target.id == "__all__":
                        declared = literal_names(statement.value)
                    else:
                        defined.add(target.id)
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            if statement.target.id == "__all__" and statement.value is not None:
                declared = literal_names(statement.value)
            else:
                defined.add(statement.target.id)
        elif isinstance(statement, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            defined.add(statement.name)
        elif is_package and isinstance(statement, ast.ImportFrom) and statement.level > 0:
            defined.update(alias.asname or alias.name for alias in statement.names)
    names = declared if declared is not None else sorted(defined)
    return sorted({name for name in names if not name.startswith("_")})


def imported_names(name: str, tree: ast.Module, is_package: bool) -> list[str] | None:
    import importlib
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = importlib.import_module(name)
    except Exception:
        return None
    declared = getattr(module, "__all__", None)
    if declared is not None:
        names = [str(item) for item in declared]
        if is_package:  # what a package imports from its own modules is importable too
            names += [
                key
                for key, value in vars(module).items()
                if (isinstance(value, type) or callable(value))
                and str(getattr(value, "__module__", "")).startswith(name + ".")
            ]
    else:
        assigned = set(public_names(tree, is_package=False))
        names = [
            key
            for key, value in vars(module).items()
            if (isinstance(value, type) or callable(value))
            and (getattr(value, "__module__", None) == name or key in assigned)
        ]
    return sorted({item for item in names if not item.startswith("_")})


def dump() -> None:
    import logging

    import google.adk  # only inside the peer venv

    logging.disable(logging.CRITICAL)

    root = Path(google.adk.__file__).resolve().parent
    modules: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).with_suffix("")
        parts = list(relative.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        if any(part.startswith("_") for part in parts):
            continue
        name = ".".join(["google", "adk", *parts])
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = imported_names(name, tree, is_package)
        if names is None:
            names = public_names(tree, is_package)
        modules[name] = names
    version = getattr(google.adk, "__version__", "?")
    print(json.dumps({"version": version, "modules": modules}, indent=1, sort_keys=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", action="store_true", help="(inside the peer venv) print JSON")
    parser.add_argument("--no-install", action="store_true")
    arguments = parser.parse_args()
    if arguments.dump:
        dump()
        return
    sys.path.insert(0, str(BENCH))
    from peers import PEERS, ensure_venv

    python = ensure_venv(PEERS["adk"], install=not arguments.no_install)
    done = subprocess.run(
        [str(python), str(Path(__file__).resolve()), "--dump"],
        capture_output=True,
        text=True,
        check=True,
    )
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(done.stdout, encoding="utf-8")
    surface = json.loads(done.stdout)
    names = sum(len(v) for v in surface["modules"].values())
    print(f"google-adk {surface['version']}: {len(surface['modules'])} modules, {names} names")
    print(f"written to {OUTPUT.relative_to(BENCH.parent)}")


if __name__ == "__main__":
    main()
