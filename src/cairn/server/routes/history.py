"""cairn's session routes: pages of sessions and events, a summary, rewind, fork, verify."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from cairn.events.event import Event
from cairn.events.rewind import rewound_event_ids
from cairn.server.access import EVERY_USER
from cairn.server.context import Server, ServerContext
from cairn.server.models import (
    SERVER_ERRORS,
    EventsPage,
    ForkRequest,
    RenameSessionRequest,
    RewindRequest,
    SessionInfoJSON,
    SessionsPage,
    SessionSummary,
    TimelinePage,
    VerifyReport,
    ok,
    session_json,
)
from cairn.server.session_titles import infos_json
from cairn.server.timeline import TimelineRequest, timeline_page
from cairn.server.timeline_filter import Kind, TimelineFilter
from cairn.sessions.session import Session
from cairn.sessions.verify import verify_session

router = APIRouter(prefix="/cairn", tags=["cairn"], responses=SERVER_ERRORS)
SESSIONS = "/apps/{app_name}/users/{user_id}/sessions"
_PAGE = 1000


async def all_events(ctx: ServerContext, app_name: str, user_id: str, sid: str) -> list[Event]:
    """The session's whole log, read page by page."""
    found: list[Event] = []
    cursor = None
    while True:
        page = await ctx.sessions.list_events(
            app_name=app_name, user_id=user_id, session_id=sid, limit=_PAGE, cursor=cursor
        )
        found.extend(page.events)
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


async def head_and_initial_state(
    ctx: ServerContext, app_name: str, user_id: str, session_id: str
) -> tuple[Session, dict[str, Any]]:
    """The session without events (404 if missing) and the state it was created with."""
    session = await ctx.session_head(app_name, user_id, session_id)
    initial = await ctx.sessions.get_initial_state(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    return session, initial or {}


@router.get(
    SESSIONS,
    summary="A page of sessions, newest first (user '*': every user; admins)",
    response_model=None,
    responses=ok(SessionsPage, 404, 422),
)
async def list_sessions_page(
    ctx: Server,
    app_name: str,
    user_id: str,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    cursor: str | None = None,
) -> Any:
    await ctx.apps.check(app_name)
    user = None if user_id == EVERY_USER else user_id
    page = await ctx.sessions.list_sessions_page(
        app_name=app_name, user_id=user, limit=limit, cursor=cursor or None
    )
    total = await ctx.sessions.count_sessions(app_name=app_name, user_id=user)
    owners = [(s.user_id, s.id) for s in page.sessions]
    data: dict[str, Any] = {
        "sessions": [session_json(s, events=False) for s in page.sessions],
        "infos": await infos_json(ctx, app_name, owners),
        "total": total,
    }
    if page.next_cursor is not None:
        data["nextCursor"] = page.next_cursor
    return data


@router.get(
    SESSIONS + "/{session_id}",
    summary="A session (no events), its initial state and event count (rewound=true: and "
    "its rewound event ids)",
    response_model=None,
    responses=ok(SessionSummary, 404, 422),
)
async def session_summary(
    app_name: str,
    user_id: str,
    session_id: str,
    ctx: Server,
    rewound: Annotated[
        bool,
        Query(
            description="Also list every rewound event id (reads the whole log); the "
            "timeline route marks them page by page instead"
        ),
    ] = False,
) -> Any:
    session, initial = await head_and_initial_state(ctx, app_name, user_id, session_id)
    (info,) = await infos_json(ctx, app_name, [(user_id, session_id)])
    data: dict[str, Any] = {
        "session": session_json(session, events=False),
        "info": info,
        "initialState": initial,
        "eventCount": session.revision,
    }
    if rewound:
        events = await all_events(ctx, app_name, user_id, session_id)
        taken = rewound_event_ids(events)
        data["rewoundEventIds"] = [e.id for e in events if e.id in taken]
    return data


@router.get(
    SESSIONS + "/{session_id}/timeline",
    summary="A page of the timeline (newest first by default): events, their state changes, "
    "rewound marks, cursors both ways; filters scan a bounded number of events per request",
    response_model=None,
    responses=ok(TimelinePage, 404, 422),
)
async def timeline(
    ctx: Server,
    app_name: str,
    user_id: str,
    session_id: str,
    limit: Annotated[int, Query(ge=1, le=1000, description="Events per page")] = 50,
    cursor: Annotated[
        str | None, Query(description="A page's olderCursor or newerCursor, unchanged")
    ] = None,
    direction: Annotated[
        Literal["forward", "backward"],
        Query(description="Without a cursor: the newest page (backward) or the oldest"),
    ] = "backward",
    author: Annotated[str, Query(description="Only events by this author")] = "",
    kind: Annotated[Kind | None, Query(description="Only events of this kind")] = None,
    text: Annotated[
        str,
        Query(
            description="Only events whose text, calls, results or output contain this "
            "(case-insensitive)"
        ),
    ] = "",
    node: Annotated[str, Query(description="Only events whose node path contains this")] = "",
    scan: Annotated[
        int, Query(ge=1, le=10000, description="The most events one request scans")
    ] = 2000,
) -> Any:
    session, initial = await head_and_initial_state(ctx, app_name, user_id, session_id)
    request = TimelineRequest(
        limit=limit,
        cursor=cursor or None,
        direction=direction,
        keep=TimelineFilter(author=author, kind=kind or "", text=text, node=node),
        scan=scan,
    )
    return await timeline_page(
        ctx.sessions,
        app_name,
        user_id,
        session_id,
        head=session.revision,
        initial_state=initial,
        request=request,
    )


@router.get(
    SESSIONS + "/{session_id}/events",
    summary="A page of a session's events",
    response_model=None,
    responses=ok(EventsPage, 404, 422),
)
async def list_events(
    ctx: Server,
    app_name: str,
    user_id: str,
    session_id: str,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: str | None = None,
    direction: Literal["forward", "backward"] = "forward",
) -> Any:
    await ctx.apps.check(app_name)
    page = await ctx.sessions.list_events(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        limit=limit,
        cursor=cursor or None,
        direction=direction,
    )
    data: dict[str, Any] = {"events": [event.to_dict() for event in page.events]}
    if page.next_cursor is not None:
        data["nextCursor"] = page.next_cursor
    return data


@router.post(
    SESSIONS + "/{session_id}/rewind",
    summary="Take the session back to just before an invocation; returns the rewind event",
    response_model=None,
    responses=ok(Event, 400, 404, 409, 413, 422),
)
async def rewind(
    ctx: Server,
    app_name: str,
    user_id: str,
    session_id: str,
    body: RewindRequest,
) -> Any:
    runner = await ctx.runner(app_name)
    await ctx.session_head(app_name, user_id, session_id)
    event = await runner.rewind_async(
        user_id=user_id, session_id=session_id, rewind_before_invocation_id=body.invocation_id
    )
    return event.to_dict()


@router.post(
    SESSIONS + "/{session_id}/fork",
    summary="A new session whose history is a prefix of this one's (up to an event)",
    response_model=None,
    responses=ok(Session, 400, 404, 409, 413, 422),
)
async def fork(
    ctx: Server,
    app_name: str,
    user_id: str,
    session_id: str,
    body: ForkRequest | None = None,
) -> Any:
    body = body or ForkRequest()
    await ctx.apps.check(app_name)
    session = await ctx.sessions.fork_session(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        up_to_event_id=body.up_to_event_id,
        new_session_id=body.new_session_id,
    )
    return session_json(session, events=False)


@router.put(
    SESSIONS + "/{session_id}/name",
    summary="Name a session (null or blank: unnamed, called by its first message)",
    response_model=None,
    responses=ok(SessionInfoJSON, 400, 404, 413, 422),
)
async def rename(
    ctx: Server,
    app_name: str,
    user_id: str,
    session_id: str,
    body: RenameSessionRequest,
) -> Any:
    await ctx.apps.check(app_name)
    await ctx.sessions.set_session_name(
        app_name=app_name, user_id=user_id, session_id=session_id, name=body.name
    )
    (info,) = await infos_json(ctx, app_name, [(user_id, session_id)])
    return info


@router.get(
    SESSIONS + "/{session_id}/verify",
    summary="Check that the session's stored state equals the fold of its log",
    response_model=None,
    responses=ok(VerifyReport, 404, 422),
)
async def verify(app_name: str, user_id: str, session_id: str, ctx: Server) -> Any:
    await ctx.session_head(app_name, user_id, session_id)
    differences = await verify_session(
        ctx.sessions, app_name=app_name, user_id=user_id, session_id=session_id
    )
    return {
        "ok": not differences,
        "differences": [
            {
                "scope": d.scope,
                "key": d.key,
                "kind": d.kind,
                "stored": d.stored,
                "expected": d.expected,
                "description": d.describe(),
            }
            for d in differences
        ],
    }
