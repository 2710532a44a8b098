"""Names of Python objects in agent configs (``my_package.tools.lookup``), resolved with care.

A config file names code by its fully qualified name; resolving the name imports the module
and reads the attribute. The standard library (and YAML loaders, whose unsafe entry points
build objects from text) can never be named: a config that could name ``os.system`` or
``subprocess.run`` would run anything, and an agent config only ever needs the agent's own
package, ``cairn``, or a third-party integration.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from cairn.errors import CairnError

_REFUSED_TOP_MODULES = (
    frozenset(sys.stdlib_module_names)
    | frozenset(sys.builtin_module_names)
    | frozenset(
        {
            # Not in stdlib_module_names on every supported Python, or third-party
            # packages whose loaders build arbitrary objects from a document.
            "yaml",
            "ruamel",
            "distutils",
            "imp",
            "asynchat",
            "asyncore",
            "smtpd",
            "test",
            "_testcapi",
            "_testinternalcapi",
        }
    )
)


class CodeReferenceError(CairnError, ValueError):
    """A name in an agent config does not resolve to a Python object it may name."""


def check_module_reference(name: str) -> None:
    """Refuse ``name`` if its top-level module is one configs may not name (the standard
    library, YAML loaders); ``CodeReferenceError`` says why and what to name instead."""
    top = name.split(".", 1)[0]
    if top in _REFUSED_TOP_MODULES:
        raise CodeReferenceError(
            f"{name!r} names the module {top!r}, which an agent config may not reference "
            "(the standard library can run arbitrary code); reference a function or object "
            "of your own package, of cairn, or of a third-party package instead"
        )


def resolve_fully_qualified_name(name: str) -> Any:
    """The object ``module.path.attribute`` names: imports ``module.path``, reads
    ``attribute`` (``CodeReferenceError`` if either is missing or the module is refused)."""
    if not isinstance(name, str) or "." not in name.strip("."):
        raise CodeReferenceError(
            f"{name!r} is not a fully qualified name; write the module path and the name in "
            "it, e.g. my_agent.tools.get_weather"
        )
    check_module_reference(name)
    module_path, _, attribute = name.rpartition(".")
    try:
        module = importlib.import_module(module_path)
    except ModuleNotFoundError as error:
        missing = error.name or module_path
        if module_path == missing or module_path.startswith(missing + "."):
            raise CodeReferenceError(
                f"{name!r}: no module {module_path!r} can be imported; check the spelling, and "
                "that the folder holding the package is on sys.path (cairn run, web and "
                "api-server put an agent folder's parent there)"
            ) from None
        raise  # the named module exists but imports something missing: its own error
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise CodeReferenceError(
            f"{name!r}: module {module_path!r} has no attribute {attribute!r}"
        ) from None
