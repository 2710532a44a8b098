"""Where a REST tool may send a request: public hosts only, unless private ones are allowed.

The host is resolved once and the request is sent to the address that was checked (the
``Host`` header and TLS server name stay the host's), so a DNS answer that changes between
the check and the connection cannot send it elsewhere. Through a proxy the proxy connects,
so only the name's addresses are checked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import socket
import urllib.request
from urllib.parse import urlsplit

_PRIVATE_SUFFIXES = (".localhost", ".local", ".internal", ".localdomain", ".home.arpa")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class BlockedTargetError(ValueError):
    """The request would go somewhere a tool may not send it (the message says where, why,
    and the setting that allows it)."""


@dataclasses.dataclass(frozen=True)
class Target:
    """A checked destination: its host name and, when the request connects to it directly,
    the addresses to connect to (None: a proxy connects, or private hosts are allowed)."""

    hostname: str
    addresses: tuple[Address, ...] | None


def _refuse(url: str, why: str) -> BlockedTargetError:
    return BlockedTargetError(
        f"refused to send the request to {url}: {why}. REST tools reach only public hosts "
        "unless the toolset is created with allow_private_network_access=True."
    )


def _is_public(address: Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_global


def _through_proxy(scheme: str, hostname: str) -> bool:
    proxies = urllib.request.getproxies()
    return bool(proxies.get(scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(
        hostname
    )


async def check_target(url: str, *, allow_private: bool) -> Target:
    """The checked destination of ``url``; ``BlockedTargetError`` if it is not an http(s)
    URL with a host, or (unless ``allow_private``) a private, loopback, link-local or
    reserved address, a ``localhost`` / ``*.internal`` / ``*.local`` name, or a name any of
    whose addresses is one."""
    parts = urlsplit(url)
    hostname = (parts.hostname or "").rstrip(".").lower()
    if parts.scheme not in ("http", "https") or not hostname:
        raise BlockedTargetError(
            f"{url!r} is not an http(s) URL with a host: the OpenAPI document needs "
            "servers: [{url: 'https://api.example.com'}] (or set it in spec_dict['servers'])."
        )
    if allow_private:
        return Target(hostname, None)
    if hostname == "localhost" or hostname.endswith(_PRIVATE_SUFFIXES):
        raise _refuse(url, f"{hostname!r} names a local or internal host")
    try:
        literal: Address | None = ipaddress.ip_address(hostname)
    except ValueError:
        literal = None
    if literal is not None:
        if not _is_public(literal):
            raise _refuse(url, f"{hostname} is not a public address")
        return Target(hostname, (literal,))
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        found = await asyncio.get_running_loop().getaddrinfo(
            hostname, port, type=socket.SOCK_STREAM
        )
    except OSError as error:
        raise BlockedTargetError(
            f"cannot resolve the host {hostname!r} of {url}: {error}"
        ) from None
    addresses = tuple(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in found))
    private = [str(a) for a in addresses if not _is_public(a)]
    if private:
        raise _refuse(url, f"{hostname!r} resolves to the non-public address {private[0]}")
    if _through_proxy(parts.scheme, hostname):
        return Target(hostname, None)
    return Target(hostname, addresses)


def pinned_url(url: str, address: Address) -> str:
    """``url`` with its host replaced by ``address`` (the port, path and query kept)."""
    parts = urlsplit(url)
    host = f"[{address}]" if address.version == 6 else str(address)
    netloc = f"{host}:{parts.port}" if parts.port else host
    return parts._replace(netloc=netloc).geturl()
