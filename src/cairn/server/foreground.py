"""A run a request waits for (``/run``, ``/run_sse``, answering an interrupt): started
through the runs service, its events read from its live channel as they come.

The client sees what it always saw: the run's events without the user's own message,
a request's error that came before any event as its HTTP status, a later failure at the
end of the stream. A client that leaves does not stop the run.
"""

from __future__ import annotations

import contextlib
from typing import Any

from google.genai import types

from cairn.agents.run_config import MultitaskStrategy
from cairn.errors import AlreadyExistsError, SessionNotFoundError
from cairn.events.event import Event
from cairn.runs.service import StartedRun
from cairn.server.context import MISSING_SESSION_FOR_RUN, ServerContext
from cairn.server.invocations import Failed, collect


class ForegroundRun:
    """A started run's events, read as ``Invocation`` gives them (``next``, ``collect``,
    ``detach``), so that ``event_stream`` serves either."""

    def __init__(self, ctx: ServerContext, started: StartedRun, *, sent_message: bool) -> None:
        self.run = started.run
        self._events = (
            started.events
            if started.events is not None
            else ctx.runs.stream(started.run)  # it executes elsewhere: read its log
        )
        self._skip_message = sent_message

    async def next(self) -> Event | Failed | None:
        """The next event, the failure that ended the run, or ``None`` at its end."""
        while True:
            try:
                event = await anext(self._events)
            except StopAsyncIteration:
                return None
            except Exception as error:
                return Failed(error)
            if self._skip_message:
                self._skip_message = False
                if _is_users_message(event):
                    continue  # the user's own message is not sent back (as ADK's server)
            return event

    async def collect(self) -> list[Event]:
        """Every event until the end; a failure is raised (the events before it are stored)."""
        return await collect(self)

    def detach(self) -> None:
        """Stop listening (the client left, or has all it wants); the run goes on."""
        close = getattr(self._events, "close", None)
        if close is not None:
            close()


def _is_users_message(event: Event) -> bool:
    return event.author == "user" and not event.partial and not event.node_info.path


async def start_foreground(
    ctx: ServerContext,
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    new_message: types.Content | None = None,
    invocation_id: str | None = None,
    state_delta: dict[str, Any] | None = None,
    streaming: bool = False,
    custom_metadata: dict[str, Any] | None = None,
    strategy: MultitaskStrategy | None = None,
) -> ForegroundRun:
    """Start the run (creating its session first when the server creates them on demand)
    and listen to it from its first event."""
    runner = await ctx.runner(app_name)
    if runner.auto_create_session:
        with contextlib.suppress(AlreadyExistsError):
            await ctx.sessions.create_session(
                app_name=app_name, user_id=user_id, session_id=session_id
            )
    try:
        started = await ctx.runs.start(
            app_name,
            user_id,
            session_id,
            new_message=new_message,
            invocation_id=invocation_id,
            state_delta=state_delta,
            streaming=streaming,
            custom_metadata=custom_metadata,
            strategy=strategy or MultitaskStrategy.ENQUEUE,
        )
    except SessionNotFoundError as error:
        raise SessionNotFoundError(
            app_name=error.app_name,
            user_id=error.user_id,
            session_id=error.session_id,
            hint=MISSING_SESSION_FOR_RUN,
        ) from None
    return ForegroundRun(ctx, started, sent_message=new_message is not None)
