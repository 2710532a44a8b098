"""ADK's artifact routes: names, a version's ``Part``, version numbers, delete."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from google.genai import types

from cairn.server.context import Server, ServerContext
from cairn.server.errors import NotFoundError
from cairn.server.models import SERVER_ERRORS, camel, errors, ok

router = APIRouter(tags=["artifacts"], responses=SERVER_ERRORS)
ARTIFACTS = "/apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts"


def _missing(name: str, session_id: str, version: int | None = None) -> NotFoundError:
    which = f"version {version} of artifact" if version is not None else "artifact"
    return NotFoundError(
        f"{which} {name!r} does not exist in session {session_id!r}. List the session's "
        "artifacts with GET .../artifacts, and an artifact's versions with "
        "GET .../artifacts/{name}/versions."
    )


@router.get(
    ARTIFACTS, summary="The names of the artifacts the session sees", responses=errors(404, 422)
)
async def list_artifact_names(
    app_name: str, user_id: str, session_id: str, ctx: Server
) -> list[str]:
    await ctx.session_head(app_name, user_id, session_id)
    return await ctx.services.artifact_service.list_artifact_keys(
        app_name=app_name, user_id=user_id, session_id=session_id
    )


async def _load(
    ctx: ServerContext,
    app_name: str,
    user_id: str,
    session_id: str,
    name: str,
    version: int | None,
) -> Any:
    await ctx.session_head(app_name, user_id, session_id)
    part = await ctx.services.artifact_service.load_artifact(
        app_name=app_name, user_id=user_id, session_id=session_id, filename=name, version=version
    )
    if part is None:
        raise _missing(name, session_id, version)
    return camel(part)


@router.get(
    ARTIFACTS + "/{artifact_name}",
    summary="An artifact (latest or ?version=N) as Part",
    response_model=None,
    responses=ok(types.Part, 404, 422),
)
async def load_artifact(
    ctx: Server,
    app_name: str,
    user_id: str,
    session_id: str,
    artifact_name: str,
    version: Annotated[int | None, Query(ge=0)] = None,
) -> Any:
    return await _load(ctx, app_name, user_id, session_id, artifact_name, version)


@router.get(
    ARTIFACTS + "/{artifact_name}/versions",
    summary="An artifact's version numbers",
    responses=errors(404, 422),
)
async def list_artifact_versions(
    ctx: Server,
    app_name: str,
    user_id: str,
    session_id: str,
    artifact_name: str,
) -> list[int]:
    await ctx.session_head(app_name, user_id, session_id)
    versions = await ctx.services.artifact_service.list_versions(
        app_name=app_name, user_id=user_id, session_id=session_id, filename=artifact_name
    )
    if not versions:
        raise _missing(artifact_name, session_id)
    return versions


@router.get(
    ARTIFACTS + "/{artifact_name}/versions/{version_id}",
    summary="One version as Part",
    response_model=None,
    responses=ok(types.Part, 404, 422),
)
async def load_artifact_version(
    ctx: Server,
    app_name: str,
    user_id: str,
    session_id: str,
    artifact_name: str,
    version_id: Annotated[int, Path(ge=0)],
) -> Any:
    return await _load(ctx, app_name, user_id, session_id, artifact_name, version_id)


@router.delete(
    ARTIFACTS + "/{artifact_name}",
    summary="Delete every version (200 with a null body, as ADK answers; also if there was none)",
    responses=errors(404, 422),
)
async def delete_artifact(
    ctx: Server,
    app_name: str,
    user_id: str,
    session_id: str,
    artifact_name: str,
) -> None:
    await ctx.apps.check(app_name)
    await ctx.services.artifact_service.delete_artifact(
        app_name=app_name, user_id=user_id, session_id=session_id, filename=artifact_name
    )
