"""Logging set-up for an app's own scripts: to stderr, or to a file in the temp folder.

ADK's samples start their `main.py` with `logs.log_to_tmp_folder()` or
`logs.setup_adk_logger()`; both work the same here, for cairn's `cairn` loggers.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time

LOGGING_FORMAT = "%(asctime)s - %(levelname)s - %(filename)s:%(lineno)d - %(message)s"


def setup_adk_logger(level: int = logging.INFO) -> None:
    """Log to stderr at ``level``, cairn's own loggers included."""
    logging.basicConfig(level=level, format=LOGGING_FORMAT)
    logging.getLogger("cairn").setLevel(level)


def log_to_tmp_folder(
    level: int = logging.INFO,
    *,
    sub_folder: str = "agents_log",
    log_file_prefix: str = "agent",
    log_file_timestamp: str | None = None,
) -> str:
    """Send all logging to a new file under the temp folder instead of stderr.

    The file is ``<tmp>/<sub_folder>/<prefix>.<timestamp>.log``; a
    ``<prefix>.latest.log`` link beside it points at the newest one where links can be
    made. Returns the file's path (and prints it, with the command to follow it).
    """
    stamp = log_file_timestamp or time.strftime("%Y%m%d_%H%M%S")
    folder = os.path.join(tempfile.gettempdir(), sub_folder)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{log_file_prefix}.{stamp}.log")
    handler = logging.FileHandler(path, mode="w", encoding="utf-8")
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter(LOGGING_FORMAT))
    root = logging.getLogger()
    root.setLevel(level)
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    print(f"Log setup complete: {path}")
    latest = os.path.join(folder, f"{log_file_prefix}.latest.log")
    print(f"To access latest log: tail -F {_link(latest, path) or path}")
    return path


def _link(link: str, target: str) -> str | None:
    """Point ``link`` at ``target`` (replacing an older link); None where it cannot."""
    try:
        if os.path.islink(link):
            os.unlink(link)
        elif os.path.exists(link):
            return None
        os.symlink(target, link)
    except OSError:
        return None
    return link


__all__ = ["LOGGING_FORMAT", "log_to_tmp_folder", "setup_adk_logger"]
