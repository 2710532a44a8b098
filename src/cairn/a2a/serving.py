"""Every app of a cairn API server over A2A, at ``/a2a/{app_name}`` (``--a2a``, ``CAIRN_A2A=1``).

As google-adk's ``api_server --a2a``: JSON-RPC at ``/a2a/{app}`` and the card at
``/a2a/{app}/.well-known/agent-card.json``; cairn adds the HTTP+JSON binding under
``/a2a/{app}/rest``. Every app is served: its card is the app folder's ``agent.json`` when it
has one (ADK's convention), else made from the agent. Tasks are the server's runs, executed
where its runs execute (in-process or Temporal) and kept in its store.

The server's authentication applies to every A2A route but the card, which the A2A
specification makes public: a request is turned into a principal by the server's hook
(the API key, JWT or the deployment's own), which must allow the app; an authenticated
user's tasks run as that user, others as ``A2A_USER_<contextId>``.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from a2a import types as a2a_types
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH, TransportProtocol
from starlette.requests import Request
from starlette.routing import Router
from starlette.types import Receive, Scope, Send

from cairn.a2a.handler import CairnRequestHandler
from cairn.a2a.routes import REST_SUFFIX, USER_SCOPE_KEY, a2a_routes
from cairn.a2a.utils.agent_card_builder import PROTOCOL_VERSION, AgentCardBuilder
from cairn.a2a.utils.agent_to_a2a import artifact_loader_for, load_agent_card
from cairn.server.access import check_app
from cairn.server.errors import AuthenticationError, error_response
from cairn.sessions.a2a_store import a2a_store_for

if TYPE_CHECKING:
    from fastapi import FastAPI

    from cairn.server.context import ServerContext

logger = logging.getLogger("cairn.a2a")

A2A_PREFIX = "/a2a"
ADK_CARD_FILE = "agent.json"


def _with_interfaces(card: a2a_types.AgentCard, base: str) -> a2a_types.AgentCard:
    """A card read from ``agent.json`` without interfaces gets this server's."""
    if not card.supported_interfaces:
        for url, binding in (
            (base, TransportProtocol.JSONRPC),
            (base + REST_SUFFIX, TransportProtocol.HTTP_JSON),
        ):
            card.supported_interfaces.add(
                url=url, protocol_binding=binding, protocol_version=PROTOCOL_VERSION
            )
    return card


def _below_app(scope: Scope, app_name: str) -> Scope:
    """The scope with its root path ending at ``/a2a/{app}`` (where the app's routes start)
    and a path below it: ``/`` for ``/a2a/{app}`` itself, JSON-RPC's URL (ADK's)."""
    path: str = scope["path"]
    marker = f"{A2A_PREFIX}/{app_name}"
    end = path.find(marker) + len(marker)
    root, rest = path[:end], path[end:] or "/"
    return {**scope, "root_path": root, "path": root + rest, "raw_path": (root + rest).encode()}


class A2aApps:
    """The ASGI app mounted at ``/a2a/{app_name}``: the app's A2A routes (made on first use,
    one handler per app per process) behind the server's authentication."""

    def __init__(self, context: ServerContext, server: FastAPI) -> None:
        self.context = context
        self.server = server
        self._routers: dict[str, Router] = {}
        self._handlers: dict[str, CairnRequestHandler] = {}
        self._lock = asyncio.Lock()
        self._rearming: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Re-arm the push notifications of every app's tasks (in the background): the
        process that watched them may have stopped."""
        self._rearming = asyncio.create_task(self._rearm())

    async def _rearm(self) -> None:
        try:
            tasks = await a2a_store_for(self.context.sessions).list_push_tasks()
            for app_name in dict.fromkeys(task.app_name for task in tasks):
                try:
                    async with self._lock:
                        handler = await self._handler(app_name)
                except Exception:
                    logger.warning("A2A push notifications of app %r not re-armed", app_name)
                    continue
                await handler.rearm()
        except Exception:
            logger.exception("A2A push notifications not re-armed")

    async def close(self) -> None:
        if self._rearming is not None:
            self._rearming.cancel()
            await asyncio.gather(self._rearming, return_exceptions=True)
        for handler in self._handlers.values():
            await handler.aclose()

    async def _handler(
        self, app_name: str, card: a2a_types.AgentCard | None = None
    ) -> CairnRequestHandler:
        """The app's handler in this process (made once; call it holding the lock)."""
        handler = self._handlers.get(app_name)
        if handler is None:
            runner = await self.context.runner(app_name)
            handler = CairnRequestHandler(
                app_name=app_name,
                runs=self.context.runs,
                a2a_store=a2a_store_for(self.context.sessions),
                agent_card=card or a2a_types.AgentCard(name=app_name),
                artifacts=artifact_loader_for(runner),
            )
            self._handlers[app_name] = handler
        elif card is not None:
            handler.agent_card = card
        return handler

    async def _router(self, app_name: str, base: str) -> Router:
        if app_name in self._routers:
            return self._routers[app_name]
        async with self._lock:
            if app_name not in self._routers:
                runner = await self.context.runner(app_name)
                folder: Path = await self.context.apps.folder(app_name)
                if (folder / ADK_CARD_FILE).is_file():
                    card = _with_interfaces(load_agent_card(folder / ADK_CARD_FILE), base)
                else:
                    card = AgentCardBuilder(
                        agent=runner.agent, rpc_url=base, rest_url=base + REST_SUFFIX
                    ).build_now()
                handler = await self._handler(app_name, card)
                self._routers[app_name] = Router(routes=a2a_routes(handler, card))
        return self._routers[app_name]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        app_name = str(scope.get("path_params", {}).get("app_name", ""))
        try:
            await self.context.apps.check(app_name)
            if not request.url.path.endswith(AGENT_CARD_WELL_KNOWN_PATH):
                authenticate = self.server.state.cairn_authenticate
                principal = await authenticate(request)
                check_app(principal, app_name)
                scope[USER_SCOPE_KEY] = principal.user_id
            mount_root = _below_app(scope, app_name)["root_path"]
            base = f"{request.url.scheme}://{request.url.netloc}{mount_root}"
            router = await self._router(app_name, base)
        except Exception as exc:
            response = error_response(exc, scope)
            if isinstance(exc, AuthenticationError):
                response.headers["WWW-Authenticate"] = exc.challenge
            await response(scope, receive, send)
            return
        await router(_below_app(scope, app_name), receive, send)


def install_a2a(server: FastAPI, context: ServerContext) -> A2aApps:
    """Mount every app's A2A routes at ``/a2a/{app_name}``."""
    from starlette.routing import Mount, Route

    apps = A2aApps(context, server)
    server.router.routes.append(Route(A2A_PREFIX + "/{app_name}", endpoint=apps, methods=["POST"]))
    server.router.routes.append(Mount(A2A_PREFIX + "/{app_name}", app=apps))
    return apps
