"""``/docs`` and ``/redoc`` load nothing from outside the server: their scripts, styles and
icon are the server's own files, and the links hold under a root path and a mount."""

from __future__ import annotations

import re

import pytest
from tests.server.harness import asgi_client

ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")


@pytest.mark.parametrize("web", [False, True], ids=["api_server", "web"])
async def test_the_pages_link_only_the_servers_own_files(web: bool) -> None:
    async with asgi_client(api_key="k", web=web) as api:
        for page in ("/docs", "/redoc"):
            response = await api.get(page)
            assert response.status_code == 200, page
            assert "http://" not in response.text and "https://" not in response.text, page
            for url in re.findall(r'(?:src|href)="([^"]+)"', response.text):
                assert url.startswith("/docs/assets/"), (page, url)
                served = await api.get(url)
                assert served.status_code == 200 and served.content, url
        for name in ASSETS:
            assert (await api.get(f"/docs/assets/{name}")).status_code == 200, name
        assert "openapi.json" in (await api.get("/docs")).text
        # ReDoc's footer logo is on its maker's CDN: the page lets the browser load images
        # from the server only.
        redoc = await api.get("/redoc")
        assert redoc.headers["content-security-policy"] == "img-src 'self' data:"


async def test_the_pages_links_hold_under_a_root_path_and_a_mount() -> None:
    async with asgi_client(root_path="/api", mount="/agents") as api:
        swagger = (await api.get("docs")).text
        assert "url: '/api/agents/openapi.json'" in swagger
        assert 'src="/api/agents/docs/assets/swagger-ui-bundle.js"' in swagger
        assert "'/api/agents/docs/oauth2-redirect'" in swagger
        redoc = (await api.get("redoc")).text
        assert 'spec-url="/api/agents/openapi.json"' in redoc
        assert 'src="/api/agents/docs/assets/redoc.standalone.js"' in redoc
        assert (await api.get("docs/assets/swagger-ui.css")).status_code == 200
        assert (await api.get("docs/oauth2-redirect")).status_code == 200


async def test_an_unknown_asset_is_404() -> None:
    async with asgi_client() as api:
        assert (await api.get("/docs/assets/nope.js")).status_code == 404


def test_a_server_without_the_pages_files_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cairn.server import ServerSettings, api_docs, create_app

    def no_package(name: str) -> None:
        raise ModuleNotFoundError(f"No module named {name!r}")

    monkeypatch.setattr(api_docs.importlib.resources, "files", no_package)
    with pytest.raises(RuntimeError, match="fastapi-offline package"):
        create_app(ServerSettings(store="memory://"))
