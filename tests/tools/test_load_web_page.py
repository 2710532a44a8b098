"""load_web_page against a real HTTP server on localhost (http.server, in a thread)."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from google.genai import types

from cairn import Agent, InMemoryRunner
from cairn.testing import Call, ScriptedLlm
from cairn.tools import FunctionTool
from cairn.tools.load_web_page import load_web_page, load_web_page_tool

ARTICLE = b"""<!doctype html>
<html><head><title>Tides</title><style>p { color: red }</style></head>
<body>
  <nav><a href="/">Home</a> <a href="/about">About</a></nav>
  <h1>Tides</h1>
  <p>The tide rises twice a day, pulled by the <b>moon</b> and the sun.</p>
  <script>window.secret = "do not show this script to anyone";</script>
  <p>Spring tides come at new and full moon, when the pull is strongest.</p>
</body></html>"""


class Site(http.server.BaseHTTPRequestHandler):
    paths: list[str]
    release: threading.Event

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.paths.append(self.path)
        port = self.server.server_address[1]
        routes: dict[str, tuple[int, str, bytes, dict[str, str]]] = {
            "/article": (200, "text/html; charset=utf-8", ARTICLE, {}),
            "/notes.txt": (200, "text/plain", b"one\ntwo words\nthree", {}),
            "/data.json": (200, "application/json", json.dumps({"a": [1, 2]}).encode(), {}),
            "/image.png": (200, "image/png", b"\x89PNG\r\n\x1a\n\x00\x00\x00", {}),
            "/missing": (404, "text/plain", b"no such page", {}),
            "/moved": (302, "text/plain", b"", {"Location": "/article"}),
            "/to-localhost": (
                302, "text/plain", b"", {"Location": f"http://localhost:{port}/article"}
            ),
            "/loop": (302, "text/plain", b"", {"Location": "/loop"}),
            "/big": (200, "text/plain", b"x" * 5000, {}),
            "/long": (200, "text/plain", ("word " * 1000).encode(), {}),
        }  # fmt: skip
        if self.path == "/slow":
            self.release.wait(30)  # answers only when the test is over
            return
        if self.path == "/chunked-big":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for _ in range(10):
                chunk = b"y" * 1000
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            return
        status, content_type, body, headers = routes[self.path]
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def site() -> Iterator[tuple[str, list[str]]]:
    paths: list[str] = []
    release = threading.Event()
    handler = type("Handler", (Site,), {"paths": paths, "release": release})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", paths
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def local(**limits: Any) -> Any:
    """The tool allowed to reach this machine, as a function of the URL."""
    tool = load_web_page_tool(allowed_hosts=["127.0.0.1", "localhost"], **limits)
    return tool.func


def test_a_page_becomes_its_text(site: tuple[str, list[str]]) -> None:
    base, _ = site
    text = local()(f"{base}/article")
    # As in ADK, lines of three words or fewer (the menu, the heading) are dropped.
    assert text.splitlines() == [
        "The tide rises twice a day, pulled by the moon and the sun.",
        "Spring tides come at new and full moon, when the pull is strongest.",
    ]


def test_other_text_is_returned_as_it_is(site: tuple[str, list[str]]) -> None:
    base, _ = site
    assert local()(f"{base}/notes.txt") == "one\ntwo words\nthree"
    assert json.loads(local()(f"{base}/data.json")) == {"a": [1, 2]}
    assert local()(f"{base}/image.png") == (
        f"Failed to fetch url: {base}/image.png: its content (image/png) is not text"
    )


def test_by_default_this_machine_and_private_networks_are_refused(
    site: tuple[str, list[str]],
) -> None:
    base, paths = site
    port = base.rsplit(":", 1)[1]
    for url, why in [
        (f"{base}/article", "127.0.0.1 is a private or local address"),
        (f"http://localhost:{port}/article", "localhost is a local or internal host"),
        ("http://169.254.169.254/latest/meta-data", "is a private or local address"),
        ("http://10.1.2.3/", "is a private or local address"),
        ("http://[::ffff:127.0.0.1]/", "is a private or local address"),
        ("http://metadata.google.internal/", "is a local or internal host"),
        ("file:///etc/passwd", "only http and https URLs can be fetched"),
        ("ftp://example.com/file", "only http and https URLs can be fetched"),
    ]:
        answer = load_web_page(url)
        assert answer.startswith(f"Failed to fetch url: {url}: ") and why in answer, answer
    assert paths == []  # the server was never asked


def test_redirects_are_followed_and_each_one_is_checked(site: tuple[str, list[str]]) -> None:
    base, paths = site
    assert "The tide rises" in local()(f"{base}/moved")
    only_ip = load_web_page_tool(allowed_hosts=["127.0.0.1"]).func
    answer = only_ip(f"{base}/to-localhost")
    assert "localhost is a local or internal host" in answer
    assert paths[-1] == "/to-localhost"  # the redirect's target was never asked for
    assert "more than 5 redirects" in local()(f"{base}/loop")


def test_a_host_name_tries_each_of_its_addresses(site: tuple[str, list[str]]) -> None:
    base, _ = site
    port = base.rsplit(":", 1)[1]
    # localhost may resolve to ::1 first, where nothing listens; 127.0.0.1 then answers.
    assert "Spring tides" in local()(f"http://localhost:{port}/article")


def test_errors_and_limits(site: tuple[str, list[str]]) -> None:
    base, _ = site
    assert local()(f"{base}/missing").endswith("the server answered HTTP 404")
    small = local(max_bytes=1000)
    assert small(f"{base}/big").endswith("the page is larger than 1000 bytes")
    assert small(f"{base}/chunked-big").endswith("the page is larger than 1000 bytes")
    text = local(max_chars=100)(f"{base}/long")
    assert text.startswith("word word") and len(text.split("\n")[0]) == 100
    assert text.endswith("[... 4900 more characters of this page cut]")
    answer = local(timeout=0.5)(f"{base}/slow")
    assert answer == f"Failed to fetch url: {base}/slow: no answer within 0.5 s"


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive timeout"):
        load_web_page_tool(timeout=0)


async def test_an_agent_reads_a_page(site: tuple[str, list[str]]) -> None:
    base, _ = site
    tool = load_web_page_tool(allowed_hosts=["127.0.0.1"])
    assert isinstance(tool, FunctionTool) and tool.name == "load_web_page"
    llm = ScriptedLlm(script=[Call("load_web_page", url=f"{base}/article"), "Twice a day."])
    runner = InMemoryRunner(agent=Agent(name="reader", model=llm, tools=[tool]), app_name="web")
    await runner.session_service.create_session(app_name="web", user_id="u", session_id="s")
    message = types.Content(role="user", parts=[types.Part(text="How often do tides rise?")])
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]
    [response] = events[1].get_function_responses()
    assert response.response is not None
    assert "twice a day" in response.response["result"]
    declared = llm.requests[0].function_declarations[0]
    assert declared.description == "Fetches the content in the url and returns the text in it."
    assert events[-1].is_final_response()


def test_the_adk_function_is_a_plain_tool() -> None:
    tool = FunctionTool(load_web_page)
    declaration = tool.declaration()
    assert declaration.parameters_json_schema is not None
    assert declaration.parameters_json_schema["required"] == ["url"]
