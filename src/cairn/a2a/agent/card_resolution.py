"""Where a remote agent's card comes from (an ``AgentCard``, a URL, a file) and what it must
say before a client talks to the endpoints it names."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
from a2a.client import A2ACardResolver
from a2a.client.card_resolver import parse_agent_card
from a2a.client.errors import AgentCardResolutionError as SdkCardError
from a2a.types import AgentCard
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from google.protobuf.json_format import ParseError

from cairn.a2a.agent.errors import AgentCardResolutionError
from cairn.a2a.utils.agent_card_builder import IDEMPOTENT_MESSAGES_EXTENSION

IDEMPOTENT_MESSAGE_ID_EXTENSION = IDEMPOTENT_MESSAGES_EXTENSION
"""The card extension (``capabilities.extensions[].uri``) by which a remote agent says that
a message whose ``messageId`` it has seen already never runs twice: it answers with the task
the first one made. Only to such a remote does ``RemoteA2aAgent`` resend a message whose
answer a crash lost (cairn's A2A server declares it)."""

MAX_CARD_DESCRIPTION = 1024
"""A fetched card's description, adopted as the agent's, is cut to this many characters."""

_PORTS = {"http": 80, "https": 443}


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def is_loopback(host: str | None) -> bool:
    """``localhost`` (and ``*.localhost``) or a loopback address."""
    if not host:
        return False
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _origin(url: str) -> tuple[str, str, int | None]:
    parsed = urlparse(url)
    scheme = parsed.scheme.lower()
    return scheme, (parsed.hostname or "").lower(), parsed.port or _PORTS.get(scheme)


def _safe_scheme(url: str) -> bool:
    parsed = urlparse(url)
    return parsed.scheme.lower() == "https" or is_loopback(parsed.hostname)


async def fetch_card(
    agent: str, url: str, client: httpx.AsyncClient, http_kwargs: dict[str, Any]
) -> AgentCard:
    """The card at ``url``: the URL itself, or the well-known path when it names only the
    host (``https://host`` -> ``https://host/.well-known/agent-card.json``)."""
    if not _safe_scheme(url):
        raise AgentCardResolutionError(
            f"remote agent {agent!r}: the agent card URL {url!r} must use https (plain http is "
            "allowed on a loopback host only)"
        )
    parsed = urlparse(url)
    if not parsed.netloc:
        raise AgentCardResolutionError(
            f"remote agent {agent!r}: {url!r} is not a URL; give e.g. "
            f"'https://host{AGENT_CARD_WELL_KNOWN_PATH}'"
        )
    resolver = A2ACardResolver(client, f"{parsed.scheme}://{parsed.netloc}")
    try:
        return await resolver.get_agent_card(
            relative_card_path=parsed.path.rstrip("/") or None, http_kwargs=http_kwargs
        )
    except SdkCardError as error:
        raise AgentCardResolutionError(
            f"remote agent {agent!r}: could not get its agent card from {url!r}: "
            f"{error.message}. Check that the remote agent runs and serves its card there "
            f"(by default at {AGENT_CARD_WELL_KNOWN_PATH})"
        ) from error


def read_card_file(agent: str, path: str) -> AgentCard:
    """The card in the JSON file at ``path``."""
    file = Path(path)
    if not file.is_file():
        raise AgentCardResolutionError(
            f"remote agent {agent!r}: agent card file {path!r} does not exist (or is not a "
            "file); give the path of the card's JSON, its URL, or an AgentCard"
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        return parse_agent_card(data)
    except (ValueError, ParseError) as error:
        raise AgentCardResolutionError(
            f"remote agent {agent!r}: agent card file {path!r} is not a valid agent card: {error}"
        ) from error


def rpc_urls(card: AgentCard) -> list[str]:
    """Every endpoint the card offers (a client may pick any of them)."""
    found: list[str] = []
    for interface in card.supported_interfaces:
        if interface.url and interface.url not in found:
            found.append(interface.url)
    return found


def check_card(agent: str, card: AgentCard, source: str | None) -> None:
    """The card names an endpoint; a card fetched over the network names only https (or
    loopback) endpoints on the origin it came from, as ADK requires."""
    urls = rpc_urls(card)
    if not urls:
        raise AgentCardResolutionError(
            f"remote agent {agent!r}: its agent card lists no endpoint "
            "(supportedInterfaces with a url); the card must say where to send messages"
        )
    for url in urls:
        parsed = urlparse(url)
        if not parsed.scheme or not parsed.netloc:
            raise AgentCardResolutionError(
                f"remote agent {agent!r}: its agent card names the endpoint {url!r}, which "
                "is not a URL"
            )
    if source is None or not is_url(source):
        return  # a card given in code or read from a file: the caller chose its endpoints
    for url in urls:
        if not _safe_scheme(url):
            raise AgentCardResolutionError(
                f"remote agent {agent!r}: the card from {source!r} names the endpoint {url!r}; "
                "endpoints must use https (plain http on a loopback host only)"
            )
        if _origin(url) != _origin(source):
            raise AgentCardResolutionError(
                f"remote agent {agent!r}: the card from {source!r} names the endpoint {url!r} "
                "on another origin; a fetched card may only send messages to its own origin "
                "(pass the AgentCard itself to trust other endpoints)"
            )


def deduplicates(card: AgentCard) -> bool:
    """The remote says a repeated messageId never runs twice (its card has
    ``IDEMPOTENT_MESSAGE_ID_EXTENSION``)."""
    return any(
        extension.uri == IDEMPOTENT_MESSAGE_ID_EXTENSION
        for extension in card.capabilities.extensions
    )


def adopted_description(card: AgentCard) -> str:
    description = card.description or ""
    if len(description) > MAX_CARD_DESCRIPTION:
        description = description[:MAX_CARD_DESCRIPTION] + "... [truncated]"
    return description
