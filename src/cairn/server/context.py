"""What every route reads: the settings, the process's stores, the apps."""

from __future__ import annotations

import dataclasses
from typing import Annotated

from fastapi import Depends, Request

from cairn.errors import SessionNotFoundError
from cairn.runners.runner import Runner
from cairn.server.registry import AppRegistry
from cairn.server.services import Services
from cairn.server.settings import ServerSettings
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.session import Session

NO_EVENTS = GetSessionConfig(num_recent_events=0)


@dataclasses.dataclass
class ServerContext:
    settings: ServerSettings
    services: Services
    apps: AppRegistry

    @property
    def sessions(self) -> BaseSessionService:
        return self.services.session_service

    async def runner(self, app_name: str) -> Runner:
        return await self.apps.runner(app_name)

    async def session_head(self, app_name: str, user_id: str, session_id: str) -> Session:
        """The session without events, after checking the app; ``SessionNotFoundError``."""
        await self.apps.check(app_name)
        session = await self.sessions.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id, config=NO_EVENTS
        )
        if session is None:
            raise SessionNotFoundError(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                hint="Create it with POST /apps/{app}/users/{user}/sessions, or list the "
                "user's sessions with GET /apps/{app}/users/{user}/sessions.",
            )
        return session

    async def close(self) -> None:
        await self.apps.close()
        await self.services.close()


def server(request: Request) -> ServerContext:
    """The FastAPI dependency that hands routes the server's context."""
    context: ServerContext = request.app.state.cairn
    return context


Server = Annotated[ServerContext, Depends(server)]
"""A route parameter ``ctx: Server`` receives the server's context."""
