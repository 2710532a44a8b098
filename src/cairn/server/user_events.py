"""Events a client's request appends itself (a state edit, an uploaded artifact), not an
agent's: written as the user, under the session's lease, so never beside a running
invocation (``SessionBusyError``, a 409, while one holds the session)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator

from cairn.events.event import Event
from cairn.events.event_actions import EventActions
from cairn.server.context import ServerContext
from cairn.sessions.lease import bind_lease, hold_session, lease_holder
from cairn.sessions.session import Session


@contextlib.asynccontextmanager
async def held_session(
    ctx: ServerContext, app_name: str, user_id: str, session_id: str
) -> AsyncIterator[Session]:
    """The session (no events) under its lease, taken at once or ``SessionBusyError``."""
    lease = hold_session(
        ctx.sessions,
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        holder=lease_holder(f"user-edit-{uuid.uuid4().hex[:12]}"),
        wait=0.0,
        ttl=ctx.settings.lease_ttl,
    )
    async with lease as held:
        session = await ctx.session_head(app_name, user_id, session_id)
        bind_lease(session, held)
        yield session


async def append_user_event(ctx: ServerContext, session: Session, actions: EventActions) -> Event:
    """Append a user event carrying ``actions`` (no content) in an invocation of its own."""
    event = Event(invocation_id=f"p-{uuid.uuid4()}", author="user", actions=actions)
    return await ctx.sessions.append_event(session, event)
