"""ADK's ``/health`` and ``/version``: what a load balancer, an orchestrator's probe or a
client checks before it uses the server. Both are open (no credentials, as in ADK): they
hold no data, and a probe has no credentials to send (``create_app`` adds them outside the
app-wide authentication, ``cairn.server.auth.OPEN_PATHS``)."""

from __future__ import annotations

import sys
from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

from cairn.version import __version__

router = APIRouter(tags=["server"])


class Health(BaseModel):
    """ADK's health answer: the process serves HTTP (it does not reach the stores)."""

    status: Literal["ok"]


class ServerVersion(BaseModel):
    """ADK's version answer, with cairn's version: ``{version, language, language_version}``
    (snake_case, as ADK sends it)."""

    version: str
    language: Literal["python"]
    language_version: str


@router.get("/health", summary='The server is up: always {"status": "ok"}')
async def health() -> Health:
    return Health(status="ok")


@router.get("/version", summary="cairn's version and the Python version it runs on")
async def version() -> ServerVersion:
    python = sys.version_info
    return ServerVersion(
        version=__version__,
        language="python",
        language_version=f"{python.major}.{python.minor}.{python.micro}",
    )
