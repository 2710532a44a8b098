"""``load_web_page``: fetch a URL the model names and give it the page's text.

The model chooses the URL, so the fetch is guarded as ADK guards it: only ``http`` and
``https``; no loopback, private, link-local or cloud-metadata address (by name, and by
every address the name resolves to, the connection then pinned to a checked address so
a second DNS answer cannot swap it); each redirect checked the same way. It is bounded:
one deadline for the whole fetch, a cap on the bytes read and on the text returned. A
failure comes back to the model as text (``Failed to fetch url: ...`` and why), as in ADK.

HTML is turned into text with the standard library (no BeautifulSoup or lxml needed):
scripts and styles are left out, and, as ADK does, lines of three words or fewer (menus,
buttons, captions) are dropped. Other text (plain text, JSON, XML) is returned as it is.

``load_web_page_tool(allowed_hosts=[...], ...)`` makes the same tool with other limits,
e.g. to let an agent read a documentation server on ``localhost``.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
import socket
import time
import urllib.request
from collections.abc import Iterable
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx2

from cairn.tools.function_tool import FunctionTool

DEFAULT_TIMEOUT = 30.0
"""Seconds for the whole fetch: connecting, redirects and reading the body."""
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
"""The most bytes of a response body read; a larger page is a failure."""
DEFAULT_MAX_CHARS = 100_000
"""The most characters of text given to the model; the rest is cut, with a note saying so."""
MAX_REDIRECTS = 5

_BLOCKED_NAMES = frozenset({"localhost", "metadata", "metadata.goog"})
_BLOCKED_SUFFIXES = (".localhost", ".local", ".internal", ".metadata.goog")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_CHUNK = 64 * 1024
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_TEXT_TYPES = ("application/json", "application/xml", "application/javascript")
_SKIPPED_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "head"})
_BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl",
        "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4",
        "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
        "summary", "table", "td", "th", "title", "tr", "ul",
    }
)  # fmt: skip
_META_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class _FetchError(Exception):
    """Why a page could not be fetched (said to the model)."""


@dataclasses.dataclass(frozen=True)
class _Limits:
    allowed_hosts: frozenset[str] = frozenset()
    timeout: float = DEFAULT_TIMEOUT
    max_bytes: int = DEFAULT_MAX_BYTES
    max_chars: int = DEFAULT_MAX_CHARS


def load_web_page(url: str) -> str:
    """Fetches the content in the url and returns the text in it.

    Args:
        url: The url to browse.
    """
    return _load(url, _Limits())


def load_web_page_tool(
    *,
    allowed_hosts: Iterable[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> FunctionTool:
    """The ``load_web_page`` tool with other limits.

    ``allowed_hosts``: host names or IP addresses (as written in URLs) the tool may reach
    although they are local or private (``"localhost"``, ``"127.0.0.1"``, an intranet
    name); everything else stays guarded. ``timeout`` (seconds, the whole fetch),
    ``max_bytes`` (of the body read) and ``max_chars`` (of the text returned) bound it.
    """
    if timeout <= 0 or max_bytes <= 0 or max_chars <= 0:
        raise ValueError(
            "load_web_page_tool needs a positive timeout, max_bytes and max_chars; got "
            f"timeout={timeout!r}, max_bytes={max_bytes!r}, max_chars={max_chars!r}"
        )
    limits = _Limits(
        allowed_hosts=frozenset(_normal_host(host) for host in allowed_hosts),
        timeout=timeout,
        max_bytes=max_bytes,
        max_chars=max_chars,
    )

    def load_web_page(url: str) -> str:
        return _load(url, limits)

    load_web_page.__doc__ = globals()["load_web_page"].__doc__
    return FunctionTool(load_web_page)


def _load(url: str, limits: _Limits) -> str:
    try:
        body, content_type, charset = _fetch(url, limits)
    except _FetchError as error:
        return f"Failed to fetch url: {url}: {error}"
    except httpx2.HTTPError as error:
        return f"Failed to fetch url: {url}: {type(error).__name__}: {error}"
    text = _page_text(body, content_type, charset)
    if text is None:
        return f"Failed to fetch url: {url}: its content ({content_type}) is not text"
    if len(text) > limits.max_chars:
        cut = len(text) - limits.max_chars
        text = f"{text[: limits.max_chars]}\n[... {cut} more characters of this page cut]"
    return text


# -- fetching -------------------------------------------------------------------------------


def _fetch(url: str, limits: _Limits) -> tuple[bytes, str, str | None]:
    """The body (at most ``max_bytes``), media type and charset of the page at ``url``,
    following redirects (each checked); everything within one deadline."""
    deadline = time.monotonic() + limits.timeout
    for _ in range(MAX_REDIRECTS + 1):
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise _FetchError(f"only http and https URLs can be fetched, not {scheme or 'this'}")
        if not parts.hostname:
            raise _FetchError("the URL has no host")
        try:
            port = parts.port
        except ValueError:
            raise _FetchError("the URL's port is not a number") from None
        host = _normal_host(parts.hostname)
        allowed = host in limits.allowed_hosts
        if not allowed and _is_blocked_name(host):
            raise _FetchError(f"{host} is a local or internal host, which cannot be fetched")
        proxy = _proxy_for(url)
        if proxy is not None:
            if not allowed:
                _check_proxied_host(host)
            attempts: list[tuple[str, dict[str, str], dict[str, Any]]] = [(url, {}, {})]
        else:
            addresses = _resolve(host)
            if not allowed and any(_is_blocked_address(a) for a in addresses):
                verb = "is" if _literal(host) is not None else "resolves to"
                raise _FetchError(f"{host} {verb} a private or local address")
            attempts = [_pinned(parts, scheme, host, port, a) for a in addresses]
        client, response = _first_answer(attempts, proxy, deadline, limits)
        try:
            if response.is_redirect:
                location = response.headers.get("location", "")
                if not location:
                    raise _FetchError(f"HTTP {response.status_code} without a location")
                url = urljoin(url, location)
                continue
            if response.status_code != 200:
                raise _FetchError(f"the server answered HTTP {response.status_code}")
            body = _read_capped(response, deadline, limits.max_bytes)
            media_type, charset = _media_type(response.headers.get("content-type", ""))
            return body, media_type, charset
        finally:
            response.close()
            client.close()
    raise _FetchError(f"more than {MAX_REDIRECTS} redirects")


def _first_answer(
    attempts: list[tuple[str, dict[str, str], dict[str, Any]]],
    proxy: str | None,
    deadline: float,
    limits: _Limits,
) -> tuple[httpx2.Client, httpx2.Response]:
    """The client and open (streamed) response of the first address that answers."""
    last: Exception | None = None
    for target, headers, extensions in attempts:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _FetchError(f"no answer within {limits.timeout:g} s")
        client = httpx2.Client(
            proxy=proxy, trust_env=False, follow_redirects=False, timeout=remaining
        )
        try:
            request = client.build_request("GET", target, headers=headers, extensions=extensions)
            response = client.send(request, stream=True)
        except httpx2.TimeoutException:
            client.close()
            raise _FetchError(f"no answer within {limits.timeout:g} s") from None
        except httpx2.TransportError as error:
            client.close()
            last = error
            continue
        return client, response
    raise _FetchError(f"could not connect: {last}")


def _pinned(
    parts: Any, scheme: str, host: str, port: int | None, address: Address
) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The URL rewritten to connect to ``address``, with the Host header (and, for https,
    the TLS server name) of the original host, so certificates are checked against it."""
    literal = f"[{address}]" if address.version == 6 else str(address)
    netloc = literal if port is None else f"{literal}:{port}"
    target = parts._replace(scheme=scheme, netloc=netloc).geturl()
    shown = f"[{host}]" if ":" in host else host
    default = 443 if scheme == "https" else 80
    headers = {"Host": shown if port in (None, default) else f"{shown}:{port}"}
    extensions: dict[str, Any] = {"sni_hostname": host} if scheme == "https" else {}
    return target, headers, extensions


def _read_capped(response: httpx2.Response, deadline: float, max_bytes: int) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise _FetchError(f"the page is larger than {max_bytes} bytes")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes(_CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise _FetchError(f"the page is larger than {max_bytes} bytes")
        if time.monotonic() > deadline:
            raise _FetchError("reading the page took too long")
        chunks.append(chunk)
    return b"".join(chunks)


# -- which hosts may be reached -------------------------------------------------------------


def _normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _is_blocked_name(host: str) -> bool:
    return host in _BLOCKED_NAMES or host.endswith(_BLOCKED_SUFFIXES)


def _literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _resolve(host: str) -> list[Address]:
    literal = _literal(host)
    if literal is not None:
        return [literal]
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise _FetchError(f"the host {host} is not known") from None
    found: dict[Address, None] = {}
    for family, _, _, _, sockaddr in infos:
        if family in (socket.AF_INET, socket.AF_INET6):
            found[ipaddress.ip_address(sockaddr[0])] = None
    if not found:
        raise _FetchError(f"the host {host} has no address")
    return list(found)


def _is_blocked_address(address: Address) -> bool:
    """Not a public address, or an IPv6 address carrying a non-public IPv4 one."""
    if not address.is_global:
        return True
    if isinstance(address, ipaddress.IPv6Address):
        inner = address.ipv4_mapped or address.sixtofour
        if inner is None and address in _NAT64:
            inner = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        return inner is not None and not inner.is_global
    return False


def _check_proxied_host(host: str) -> None:
    """A proxy resolves the name itself; still refuse a name that resolves to a private
    address here (a name that does not resolve here is left to the proxy)."""
    try:
        addresses = _resolve(host)
    except _FetchError:
        return
    if any(_is_blocked_address(a) for a in addresses):
        raise _FetchError(f"{host} resolves to a private or local address")


def _proxy_for(url: str) -> str | None:
    """The proxy the environment (``HTTPS_PROXY``, ``NO_PROXY``, ...) sets for ``url``."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme.lower()) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy


# -- text -----------------------------------------------------------------------------------


def _media_type(header: str) -> tuple[str, str | None]:
    media, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.lower() == "charset" and value:
            charset = value.strip().strip("\"'")
    return media.strip().lower(), charset


def _decode(body: bytes, charset: str | None) -> str:
    for candidate in (charset, "utf-8"):
        if candidate:
            try:
                return body.decode(candidate)
            except (LookupError, UnicodeDecodeError):
                continue
    return body.decode("utf-8", errors="replace")


def _page_text(body: bytes, media_type: str, charset: str | None) -> str | None:
    """The text a model reads of a page; None when the page is not text at all."""
    sniffed_html = not media_type and body.lstrip()[:1] == b"<"
    if media_type in _HTML_TYPES or sniffed_html:
        if charset is None:
            match = _META_CHARSET.search(body[:4096])
            charset = match.group(1).decode("ascii") if match else None
        text = _html_text(_decode(body, charset))
        return "\n".join(line for line in text.splitlines() if len(line.split()) > 3)
    textual = (
        media_type.startswith("text/")
        or media_type in _TEXT_TYPES
        or media_type.endswith(("+json", "+xml"))
    )
    if textual or (not media_type and b"\x00" not in body[:4096]):
        return _decode(body, charset)
    return None


class _TextOfHtml(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping += 1
        elif tag in _BLOCK_TAGS:
            self.pieces.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping = max(0, self._skipping - 1)
        elif tag in _BLOCK_TAGS:
            self.pieces.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.pieces.append(data)


def _html_text(html: str) -> str:
    parser = _TextOfHtml()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.pieces).splitlines())
    return "\n".join(line for line in lines if line)


__all__ = ["load_web_page", "load_web_page_tool"]
