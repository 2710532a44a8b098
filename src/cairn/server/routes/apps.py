"""The apps: ADK's ``/list-apps``; cairn's app description, and the node statuses and node
runs of an invocation."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from cairn.errors import InvocationNotFoundError
from cairn.server.access import visible_apps
from cairn.server.auth import Caller
from cairn.server.context import Server
from cairn.server.graph import app_info
from cairn.server.models import SERVER_ERRORS, AppInfo, NodeRun, NodeStatus, camel, ok
from cairn.server.node_runs import node_runs
from cairn.server.nodes import node_statuses

router = APIRouter(tags=["apps"], responses=SERVER_ERRORS)


@router.get("/list-apps", summary="The names of the apps served (that the caller may use), sorted")
async def list_apps(ctx: Server, caller: Caller) -> list[str]:
    return visible_apps(caller, await ctx.apps.names())


@router.get(
    "/cairn/apps/{app_name}",
    tags=["cairn"],
    summary="An app: agent or workflow graph",
    response_model=None,
    responses=ok(AppInfo, 404),
)
async def describe_app(app_name: str, ctx: Server) -> Any:
    runner = await ctx.runner(app_name)
    return camel(app_info(runner.app_name, runner.agent))


@router.get(
    "/cairn/apps/{app_name}/users/{user_id}/sessions/{session_id}/invocations/{invocation_id}"
    "/nodes",
    tags=["cairn"],
    summary="The status of each node run of an invocation, from its events",
    response_model=None,
    responses=ok(list[NodeStatus], 404),
)
async def invocation_nodes(
    ctx: Server,
    app_name: str,
    user_id: str,
    session_id: str,
    invocation_id: str,
) -> list[Any]:
    await ctx.session_head(app_name, user_id, session_id)
    events = await ctx.sessions.list_invocation_events(
        app_name=app_name, user_id=user_id, session_id=session_id, invocation_id=invocation_id
    )
    if not events:
        raise InvocationNotFoundError(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            invocation_id=invocation_id,
        )
    return [camel(status) for status in node_statuses(events, invocation_id)]


@router.get(
    "/cairn/apps/{app_name}/users/{user_id}/sessions/{session_id}/invocations/{invocation_id}"
    "/nodes/{node_path:path}",
    tags=["cairn"],
    summary="The runs of a node in an invocation: input, output, attempts, errors, timing, events",
    response_model=None,
    responses=ok(list[NodeRun], 404),
)
async def invocation_node_runs(
    ctx: Server,
    app_name: str,
    user_id: str,
    session_id: str,
    invocation_id: str,
    node_path: str,
) -> list[Any]:
    """``node_path`` is a run path (``wf@1/a@2``) or a node path without its last run
    number (``wf@1/a``: each of its runs); runs nested in those are listed after them.
    Only the invocation's events are read."""
    runner = await ctx.runner(app_name)
    events = await ctx.sessions.list_invocation_events(
        app_name=app_name, user_id=user_id, session_id=session_id, invocation_id=invocation_id
    )
    if not events:
        await ctx.session_head(app_name, user_id, session_id)
        raise InvocationNotFoundError(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            invocation_id=invocation_id,
        )
    return [camel(run) for run in node_runs(events, invocation_id, node_path, runner.agent)]
