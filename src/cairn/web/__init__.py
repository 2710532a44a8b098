"""The web dev UI: static files (HTML, CSS, ES modules; no build step) served at ``/``.

``cairn.server`` serves ``STATIC_DIR`` when ``ServerSettings(web=True)`` (``cairn web``);
the UI talks only to the HTTP API of docs/design/http-api-contract.md.
"""

from __future__ import annotations

from pathlib import Path

STATIC_DIR: Path = Path(__file__).resolve().parent / "static"
"""The UI's files: ``index.html`` and the ``.css`` and ``.js`` files it loads."""

__all__ = ["STATIC_DIR"]
