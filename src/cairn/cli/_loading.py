"""Load what ``cairn run PATH`` runs: ``root_agent`` or ``app`` from a file or a package, or
the agent a folder's ``root_agent.yaml`` declares (an Agent Config, docs/agent-config.md).

A ``.env`` file beside the code is read into the environment first (variables
already set are kept), so API keys can live there as with ADK.

The code is loaded by path, fresh on every call (a module of the same name
loaded earlier from the same place is replaced), with the file's directory on
``sys.path`` so that it can import its neighbours, as ``python file.py`` would.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from dotenv import load_dotenv

from cairn.agents.agent_config_error import AgentConfigError
from cairn.agents.base_agent import BaseAgent
from cairn.agents.config_agent_utils import from_config
from cairn.apps.app import App
from cairn.cli._errors import CommandError, NotFoundError

_EXPECTED = (
    "a module-level `root_agent = Agent(...)` (ADK's convention) or `app = App(name=..., "
    "root_agent=...)`, or a folder with root_agent.yaml"
)
CONFIG_FILE = "root_agent.yaml"
"""The file an Agent Config folder declares its root agent in (ADK's name)."""


def is_agent_folder(path: Path) -> bool:
    """Whether ``path`` is a folder ``load_target`` loads: a package, an ``agent.py``, or an
    Agent Config (``root_agent.yaml``)."""
    return path.is_dir() and any(
        (path / name).is_file() for name in ("__init__.py", "agent.py", CONFIG_FILE)
    )


@dataclasses.dataclass(frozen=True)
class Target:
    """The agent to run, the App around it if the code defined one, and its default name."""

    agent: BaseAgent
    app: App | None
    name: str
    """The App's name, else the module's (file stem) or package directory's name."""


def load_target(path: Path) -> Target:
    """The ``app`` or ``root_agent`` defined by the Python file or package directory ``path``."""
    path = path.expanduser().resolve()
    if not path.exists():
        raise NotFoundError(
            f"{path}: no such file or directory. Pass a Python file or a package directory "
            f"that defines {_EXPECTED}."
        )
    load_dotenv_of(path if path.is_dir() else path.parent)
    if path.is_dir():
        python = (path / "__init__.py").exists() or (path / "agent.py").exists()
        if not python and (path / CONFIG_FILE).is_file():
            return _load_config(path / CONFIG_FILE, name=path.name)
        modules = _load_directory(path)
    elif path.suffix == ".py":
        modules = [_load(path.stem, path)]
    elif path.suffix in (".yaml", ".yml"):
        name = path.parent.name if path.name == CONFIG_FILE else path.stem
        return _load_config(path, name=name)
    else:
        raise NotFoundError(
            f"{path} is not a Python file. Pass a .py file, an agent's YAML config, or a "
            f"package directory that defines {_EXPECTED}."
        )
    for module in modules:
        target = _target_in(module)
        if target is not None:
            return target
    raise NotFoundError(
        f"{path} defines no agent to run: expected {_EXPECTED}. {_what_was_found(modules)}"
    )


def load_dotenv_of(directory: Path) -> Path | None:
    """Read ``directory/.env`` into the environment, as ADK does for an agent's folder.

    Variables already set win (a key exported in the shell is not replaced).
    Returns the file read, or None when there is none.
    """
    dotenv = directory / ".env"
    if not dotenv.is_file():
        return None
    load_dotenv(dotenv, override=False)
    return dotenv


def _load_config(file: Path, *, name: str) -> Target:
    """The agent an Agent Config file declares. Its folder's parent goes on ``sys.path`` (as
    ADK's loader puts the agents directory there), so that the config can name code in the
    folder as ``folder.module.attribute``; that code is loaded fresh, as Python agents are."""
    folder = file.parent
    home = str(folder.parent)
    if home not in sys.path:
        sys.path.insert(0, home)
    for loaded in [n for n in sys.modules if n == folder.name or n.startswith(folder.name + ".")]:
        module_file = getattr(sys.modules[loaded], "__file__", None) or ""
        if not module_file or Path(module_file).resolve().is_relative_to(folder):
            del sys.modules[loaded]
    try:
        agent = from_config(file)
    except AgentConfigError as exc:
        raise CommandError(str(exc)) from None
    except Exception as exc:  # a custom agent class's own from_config failed
        raise _load_failed(file, exc) from exc
    return Target(agent=agent, app=None, name=name)


def _load_directory(path: Path) -> list[ModuleType]:
    """The package (and its ``agent`` submodule, ADK's layout), or a plain dir's ``agent.py``."""
    init, agent_file = path / "__init__.py", path / "agent.py"
    if not init.exists():
        if not agent_file.exists():
            raise NotFoundError(
                f"{path} is a directory with neither __init__.py, agent.py nor {CONFIG_FILE}. "
                f"Pass a Python file, or a package directory (ADK's layout: __init__.py and "
                f"agent.py) that defines {_EXPECTED}."
            )
        return [_load(path.name, agent_file)]
    package = _load(path.name, init, package_dir=path)
    modules = [package]
    submodule = getattr(package, "agent", None)
    if isinstance(submodule, ModuleType):
        modules.append(submodule)
    elif agent_file.exists():
        modules.append(_import_submodule(package.__name__ + ".agent", agent_file))
    return modules


def _load(stem: str, file: Path, package_dir: Path | None = None) -> ModuleType:
    name = _module_name(stem, file)
    for loaded in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
        del sys.modules[loaded]  # load this path's code fresh, submodules included
    home = str((package_dir or file).parent)
    if home not in sys.path:
        sys.path.insert(0, home)
    locations = [str(package_dir)] if package_dir is not None else None
    spec = importlib.util.spec_from_file_location(name, file, submodule_search_locations=locations)
    if spec is None or spec.loader is None:
        raise CommandError(f"{file}: Python cannot load this file as a module.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise _load_failed(file, exc) from exc
    return module


def _import_submodule(name: str, file: Path) -> ModuleType:
    try:
        return importlib.import_module(name)
    except Exception as exc:
        raise _load_failed(file, exc) from exc


def _load_failed(file: Path, exc: Exception) -> CommandError:
    details = "".join(traceback.format_exception(exc)).rstrip()
    return CommandError(f"loading {file} failed; fix the error in it:\n{details}")


def _module_name(stem: str, file: Path) -> str:
    """``stem``, unless that names another module already imported (``json``, ``cairn``...)."""
    existing = sys.modules.get(stem)
    if existing is None:
        return stem if stem not in sys.stdlib_module_names else f"cairn_run_{stem}"
    origin = getattr(existing, "__file__", None)
    if origin is not None and Path(origin).resolve() == file:
        return stem
    return f"cairn_run_{stem}"


def _target_in(module: ModuleType) -> Target | None:
    app = getattr(module, "app", None)
    if isinstance(app, App):
        return Target(agent=app.root_agent, app=app, name=app.name)
    agent = getattr(module, "root_agent", None)
    if isinstance(agent, BaseAgent):
        name = module.__name__.removeprefix("cairn_run_").split(".")[0]
        return Target(agent=agent, app=None, name=name)
    return None


def _what_was_found(modules: list[ModuleType]) -> str:
    found = [
        f"{module.__name__}.{attribute} is a {type(getattr(module, attribute)).__name__}"
        for module in modules
        for attribute in ("root_agent", "app")
        if hasattr(module, attribute)
    ]
    if not found:
        return "Neither name is defined."
    return "Found instead: " + "; ".join(found) + "."
