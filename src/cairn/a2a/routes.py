"""The HTTP routes of one agent served over A2A, with the a2a-sdk's own transports.

Under a prefix (``""`` for ``to_a2a``, ``/a2a/{app}`` for ``cairn api-server --a2a``): the
agent card at ``{prefix}/.well-known/agent-card.json``, JSON-RPC at ``{prefix}/`` (A2A 1.0,
and 0.3 clients on the same endpoint), and the HTTP+JSON binding under ``{prefix}/rest``.
"""

from __future__ import annotations

from collections.abc import Callable

from a2a import types as a2a_types
from a2a.server.context import ServerCallContext
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.requests import Request
from starlette.routing import BaseRoute

from cairn.a2a.handler import PRINCIPAL_STATE, CairnRequestHandler

USER_SCOPE_KEY = "cairn.a2a.user"
"""Where an authenticating wrapper puts the caller's user id in the ASGI scope."""

REST_SUFFIX = "/rest"


class CairnCallContextBuilder(DefaultServerCallContextBuilder):
    """The SDK's call context, with the user id a cairn server authenticated (if any)."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state[PRINCIPAL_STATE] = request.scope.get(USER_SCOPE_KEY)
        return context


def card_path(prefix: str) -> str:
    return f"{prefix.rstrip('/')}{AGENT_CARD_WELL_KNOWN_PATH}"


def a2a_routes(
    handler: CairnRequestHandler,
    card: a2a_types.AgentCard,
    prefix: str = "",
    *,
    card_for_request: Callable[[a2a_types.AgentCard], a2a_types.AgentCard] | None = None,
) -> list[BaseRoute]:
    """The card, JSON-RPC and HTTP+JSON routes of ``handler`` under ``prefix``."""
    base = prefix.rstrip("/")
    builder = CairnCallContextBuilder()
    modifier = None
    if card_for_request is not None:
        adjust = card_for_request

        async def modifier(served: a2a_types.AgentCard) -> a2a_types.AgentCard:
            return adjust(served)

    return [
        *create_agent_card_routes(card, card_modifier=modifier, card_url=card_path(base)),
        *create_jsonrpc_routes(
            handler, base or "/", context_builder=builder, enable_v0_3_compat=True
        ),
        *create_rest_routes(
            handler,
            context_builder=builder,
            enable_v0_3_compat=True,
            path_prefix=base + REST_SUFFIX,
        ),
    ]
