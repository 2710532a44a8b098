"""What every route reads: the settings, the process's stores, the apps."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Request

from cairn.errors import SessionNotFoundError
from cairn.events.event import Event
from cairn.runners.runner import Runner
from cairn.runs.service import Runs
from cairn.server.invocations import Invocation, RunningInvocations, SessionKey
from cairn.server.registry import AppRegistry
from cairn.server.schedules import ServerSchedules
from cairn.server.services import Services
from cairn.server.settings import ServerSettings
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.session import Session

if TYPE_CHECKING:
    from cairn.sessions.span_recorder import SpanRecorder
    from cairn.sessions.span_store import SpanStore

NO_EVENTS = GetSessionConfig(num_recent_events=0)


@dataclasses.dataclass
class ServerContext:
    settings: ServerSettings
    services: Services
    apps: AppRegistry
    runs: Runs
    """The runs of the store, executed as ``settings.executor`` says (``cairn.runs``)."""
    invocations: set[asyncio.Task[None]] = dataclasses.field(default_factory=set)
    """The invocations running now, listened to or not (their client may have left)."""
    running: RunningInvocations = dataclasses.field(default_factory=RunningInvocations)
    """The same invocations by session and invocation id, once their first event is in."""
    spans: SpanStore | None = None
    """Where recorded spans are read (None: the session store keeps none)."""
    recorder: SpanRecorder | None = None
    """What writes finished spans into ``spans`` (None: not recording)."""

    @functools.cached_property
    def schedules(self) -> ServerSchedules:
        """The cron schedules of the store, fired where ``runs`` execute."""
        return ServerSchedules(self.runs)

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
                hint=MISSING_SESSION,
            )
        return session

    def invoke(
        self,
        events: AsyncGenerator[Event, None],
        session: SessionKey | None = None,
        *,
        invocation_id: str | None = None,
        user_message_first: bool = False,
    ) -> Invocation:
        """Run ``events`` (a Runner's ``run_async``) in a task the server tracks until it ends;
        with ``session``, indexed in ``running`` so that it can be stopped: at once when
        ``invocation_id`` (a continued one) is given, else from its first event. With
        ``user_message_first``, the Runner yields the stored user message first
        (``yield_user_message=True``), which is not passed on."""
        return Invocation(
            events,
            self.invocations,
            self.running,
            session,
            invocation_id=invocation_id,
            user_message_first=user_message_first,
        )

    async def end_invocations(self) -> None:
        """At shutdown: stop the invocations still running (what they committed stays)."""
        running = list(self.invocations)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    async def close(self) -> None:
        await self.schedules.close()
        await self.runs.executor.close()
        await self.end_invocations()
        if self.recorder is not None:
            from cairn.telemetry.setup import remove_span_processor

            remove_span_processor(self.recorder)
            await self.recorder.close()
        await self.apps.close()
        await self.services.close()


MISSING_SESSION = (
    "Create it with POST /apps/{app}/users/{user}/sessions/{session_id} (or POST "
    "/apps/{app}/users/{user}/sessions for a generated id), or list the user's sessions "
    "with GET /apps/{app}/users/{user}/sessions."
)
"""How an HTTP client gets a session the path names but the store does not have."""

MISSING_SESSION_FOR_RUN = (
    "Create it first with POST /apps/{app}/users/{user}/sessions/{session_id} (or POST "
    "/apps/{app}/users/{user}/sessions for a generated id), or start the server with "
    "--auto-create-session (CAIRN_AUTO_CREATE_SESSION=1) to create missing sessions on "
    "demand."
)
"""The same for /run and /run_sse, where the server may also create it on demand."""


def server(request: Request) -> ServerContext:
    """The FastAPI dependency that hands routes the server's context."""
    context: ServerContext = request.app.state.cairn
    return context


Server = Annotated[ServerContext, Depends(server)]
"""A route parameter ``ctx: Server`` receives the server's context."""
