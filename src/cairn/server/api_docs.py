"""The API's documentation pages, ``/docs`` (Swagger UI) and ``/redoc``, with their scripts,
styles and icon served by the server itself, so that they render with no network access.

FastAPI's own pages load Swagger UI and ReDoc from a CDN (and ReDoc's fonts from Google):
offline, or behind a proxy that allows only the server, they stay blank. The files come
from the ``fastapi-offline`` package (a dependency of cairn), which ships them as package
data; only its files are used.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

DOCS_PATH = "/docs"
OAUTH2_REDIRECT_PATH = "/docs/oauth2-redirect"
REDOC_PATH = "/redoc"
ASSETS_PATH = "/docs/assets"
"""Where the pages' files are served: ``swagger-ui-bundle.js``, ``swagger-ui.css``,
``redoc.standalone.js`` and ``favicon.png``."""
REDOC_CSP = "img-src 'self' data:"
ASSET_FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")


def assets_directory() -> Path:
    """The folder of the pages' files, in the installed ``fastapi-offline`` package."""
    try:
        folder = Path(str(importlib.resources.files("fastapi_offline") / "static"))
    except ModuleNotFoundError as exc:
        raise RuntimeError(
            "the API's documentation pages need the fastapi-offline package, a dependency "
            "of cairn: reinstall cairn (pip install cairn)"
        ) from exc
    missing = [name for name in ASSET_FILES if not (folder / name).is_file()]
    if missing:
        raise RuntimeError(
            f"the fastapi-offline package at {folder} lacks {', '.join(missing)}: "
            "reinstall it (pip install --force-reinstall fastapi-offline)"
        )
    return folder


def _root(request: Request) -> str:
    """The path the app is reached under (``uvicorn --root-path``, a mount), without a
    trailing slash, so that the pages' links hold there too."""
    root: str = request.scope.get("root_path", "")
    return root.rstrip("/")


def install_api_docs(app: FastAPI, assets: Path) -> None:
    """Serves the documentation pages and their files (``assets``: ``assets_directory()``).
    ``app`` is made with ``docs_url=None, redoc_url=None`` (FastAPI's CDN pages off)."""
    app.mount(ASSETS_PATH, StaticFiles(directory=assets), name="api-docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"

    async def swagger_ui(request: Request) -> HTMLResponse:
        root = _root(request)
        return get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_PATH}/favicon.png",
            oauth2_redirect_url=root + OAUTH2_REDIRECT_PATH,
            # No validator badge: Swagger UI would send the document to an outside validator.
            swagger_ui_parameters={"validatorUrl": None},
        )

    async def oauth2_redirect(request: Request) -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    async def redoc(request: Request) -> HTMLResponse:
        root = _root(request)
        page = get_redoc_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{ASSETS_PATH}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_PATH}/favicon.png",
            with_google_fonts=False,
        )
        # ReDoc's footer shows its maker's logo from their CDN (and hides it when it does not
        # load): the browser is told to load images from this server only.
        page.headers["Content-Security-Policy"] = REDOC_CSP
        return page

    app.add_route(DOCS_PATH, swagger_ui, include_in_schema=False)
    app.add_route(OAUTH2_REDIRECT_PATH, oauth2_redirect, include_in_schema=False)
    app.add_route(REDOC_PATH, redoc, include_in_schema=False)
