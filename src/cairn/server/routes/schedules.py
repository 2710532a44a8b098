"""cairn's schedule routes: cron schedules that start runs (``cairn.runs.schedules``).

A schedule fires where the server's runs execute: its ``Scheduler`` (in-process) or
Temporal Schedules (``--executor temporal://...``). Each firing is a run with the
schedule's request, in the schedule's session or in a new session of its user.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from pydantic import Field

from cairn.agents.run_config import MultitaskStrategy
from cairn.runs.schedules import create_schedule
from cairn.server.access import check_state_writes
from cairn.server.auth import Caller
from cairn.server.context import Server
from cairn.server.models import SERVER_ERRORS, Body, Reply, errors, ok
from cairn.server.schedules import schedule_json

router = APIRouter(prefix="/cairn", tags=["schedules"], responses=SERVER_ERRORS)
SCHEDULES = "/apps/{app_name}/users/{user_id}/schedules"


class CreateScheduleRequest(Body):
    """A schedule: ``cron`` (five fields) in ``timezone`` says when; ``request`` what each
    run does (``newMessage``, ``stateDelta``, ``customMetadata``, ``streaming``);
    ``sessionId`` the session its runs go to (none: a new session per run)."""

    cron: Annotated[str, Field(min_length=1, max_length=200)]
    request: dict[str, Any]
    timezone: str = "UTC"
    session_id: str | None = None
    schedule_id: str | None = None
    multitask_strategy: MultitaskStrategy = MultitaskStrategy.ENQUEUE
    webhook: Annotated[str, Field(max_length=2048)] | None = None
    enabled: bool = True
    metadata: dict[str, Any] | None = None


class ScheduleJSON(Reply):
    """A schedule; times are seconds since the epoch."""

    app_name: str
    user_id: str
    schedule_id: str
    cron: str
    timezone: str
    session_id: str | None = None
    request: dict[str, Any]
    next_run_at: float
    created_at: float
    enabled: bool
    strategy: str
    webhook: str | None = None
    last_run_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class SchedulesJSON(Reply):
    schedules: list[ScheduleJSON]


@router.post(
    SCHEDULES,
    summary="Create a cron schedule that starts runs",
    status_code=201,
    response_model=None,
    responses={201: {"model": ScheduleJSON, "description": "Created"}, **errors(404, 409, 422)},
)
async def create(
    app_name: str, user_id: str, body: CreateScheduleRequest, ctx: Server, caller: Caller
) -> Response:
    await ctx.apps.check(app_name)
    delta = body.request.get("stateDelta")
    check_state_writes(caller, delta if isinstance(delta, dict) else None)
    schedule = create_schedule(
        app_name,
        user_id,
        cron=body.cron,
        request=body.request,
        timezone=body.timezone,
        session_id=body.session_id,
        schedule_id=body.schedule_id,
        strategy=body.multitask_strategy.value,
        webhook=body.webhook,
        enabled=body.enabled,
        metadata=body.metadata,
    )
    stored = await ctx.schedules.create(schedule)
    return JSONResponse(schedule_json(stored), status_code=201)


@router.get(
    SCHEDULES,
    summary="The user's schedules in the app, oldest first",
    response_model=None,
    responses=ok(SchedulesJSON, 404, 422),
)
async def list_schedules(app_name: str, user_id: str, ctx: Server) -> Any:
    await ctx.apps.check(app_name)
    found = await ctx.schedules.list(app_name, user_id)
    return {"schedules": [schedule_json(s) for s in found]}


@router.get(
    SCHEDULES + "/{schedule_id}",
    summary="One schedule",
    response_model=None,
    responses=ok(ScheduleJSON, 404, 422),
)
async def get_schedule(app_name: str, user_id: str, schedule_id: str, ctx: Server) -> Any:
    await ctx.apps.check(app_name)
    return schedule_json(await ctx.schedules.get(app_name, user_id, schedule_id))


@router.delete(
    SCHEDULES + "/{schedule_id}",
    summary="Delete a schedule (runs it started stay)",
    status_code=204,
    response_class=Response,
    responses=errors(404, 422),
)
async def delete_schedule(app_name: str, user_id: str, schedule_id: str, ctx: Server) -> Response:
    await ctx.apps.check(app_name)
    await ctx.schedules.delete(app_name, user_id, schedule_id)
    return Response(status_code=204)
