"""ADK's session routes: list, create, get, delete, and PATCH a state delta."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from cairn.events.event import Event
from cairn.events.event_actions import EventActions
from cairn.server.access import Principal, check_new_user_id, check_state_writes
from cairn.server.auth import Caller
from cairn.server.context import Server, ServerContext
from cairn.server.models import (
    SERVER_ERRORS,
    CreateSessionRequest,
    UpdateSessionRequest,
    errors,
    ok,
    session_json,
)
from cairn.server.user_events import append_user_event, held_session
from cairn.sessions.session import Session

router = APIRouter(tags=["sessions"], responses=SERVER_ERRORS)
SESSIONS = "/apps/{app_name}/users/{user_id}/sessions"


@router.get(
    SESSIONS,
    summary="List a user's sessions (without events)",
    response_model=None,
    responses=ok(list[Session], 404, 422),
)
async def list_sessions(app_name: str, user_id: str, ctx: Server) -> list[Any]:
    await ctx.apps.check(app_name)
    listed = await ctx.sessions.list_sessions(app_name=app_name, user_id=user_id)
    return [session_json(s, events=False) for s in listed.sessions]


async def _create(
    ctx: ServerContext,
    caller: Principal,
    app_name: str,
    user_id: str,
    session_id: str | None,
    state: dict[str, Any] | None,
    events: list[Event] | None,
) -> Session:
    check_new_user_id(user_id)
    check_state_writes(caller, state, *(event.actions.state_delta for event in events or []))
    await ctx.apps.check(app_name)
    session = await ctx.sessions.create_session(
        app_name=app_name, user_id=user_id, session_id=session_id, state=state
    )
    for event in events or []:
        await ctx.sessions.append_event(session, event)
    return session


@router.post(
    SESSIONS,
    summary="Create a session (409 if sessionId is taken)",
    response_model=None,
    responses=ok(Session, 400, 404, 409, 413, 422),
)
async def create_session(
    ctx: Server,
    caller: Caller,
    app_name: str,
    user_id: str,
    body: Annotated[CreateSessionRequest | None, Body()] = None,
) -> Any:
    body = body or CreateSessionRequest()
    session = await _create(
        ctx, caller, app_name, user_id, body.session_id, body.state, body.events
    )
    return session_json(session)


@router.post(
    SESSIONS + "/{session_id}",
    summary="Create a session with this id",
    response_model=None,
    responses=ok(Session, 400, 404, 409, 413, 422),
)
async def create_session_with_id(
    ctx: Server,
    caller: Caller,
    app_name: str,
    user_id: str,
    session_id: str,
    state: Annotated[dict[str, Any] | None, Body()] = None,
) -> Any:
    """The body is the initial state itself (as in ADK), or empty."""
    return session_json(await _create(ctx, caller, app_name, user_id, session_id, state, None))


@router.get(
    SESSIONS + "/{session_id}",
    summary="A session with its state and every event",
    response_model=None,
    responses=ok(Session, 404, 422),
)
async def get_session(app_name: str, user_id: str, session_id: str, ctx: Server) -> Any:
    await ctx.session_head(app_name, user_id, session_id)
    session = await ctx.sessions.get_session(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    assert session is not None
    return session_json(session)


@router.delete(
    SESSIONS + "/{session_id}",
    summary="Delete a session (200 with a null body, as ADK answers; also if it did not exist)",
    responses=errors(404, 422),
)
async def delete_session(app_name: str, user_id: str, session_id: str, ctx: Server) -> None:
    await ctx.apps.check(app_name)
    await ctx.sessions.delete_session(app_name=app_name, user_id=user_id, session_id=session_id)


@router.patch(
    SESSIONS + "/{session_id}",
    summary="Change state: appends a user event carrying stateDelta and removedStateKeys "
    "(409 while a run holds it)",
    response_model=None,
    responses=ok(Session, 400, 404, 409, 413, 422),
)
async def update_session(
    ctx: Server,
    caller: Caller,
    app_name: str,
    user_id: str,
    session_id: str,
    body: UpdateSessionRequest,
) -> Any:
    removed = body.removed_state_keys or []
    check_state_writes(caller, body.state_delta, dict.fromkeys(removed))
    await ctx.session_head(app_name, user_id, session_id)
    actions = EventActions(state_delta=dict(body.state_delta), removed_state_keys=removed or None)
    async with held_session(ctx, app_name, user_id, session_id) as session:
        await append_user_event(ctx, session, actions)
    updated = await ctx.sessions.get_session(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    assert updated is not None
    return session_json(updated)
