"""cairn's artifact routes beside ADK's: every artifact with its versions, and uploading a
file as a new version, recorded in the log as a tool's save is (``artifactDelta``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from cairn.artifacts.base_artifact_service import USER_PREFIX
from cairn.events.event_actions import EventActions
from cairn.server.context import Server
from cairn.server.models import (
    SERVER_ERRORS,
    ArtifactListing,
    ArtifactUpload,
    ArtifactVersionJSON,
    UploadArtifactRequest,
    camel,
    ok,
)
from cairn.server.user_events import append_user_event, held_session

router = APIRouter(prefix="/cairn", tags=["cairn"], responses=SERVER_ERRORS)
ARTIFACTS = "/apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts"


@router.get(
    ARTIFACTS,
    summary="The session's and the user's artifacts, each with its versions",
    response_model=None,
    responses=ok(list[ArtifactListing], 404, 422),
)
async def list_artifacts(app_name: str, user_id: str, session_id: str, ctx: Server) -> Any:
    await ctx.session_head(app_name, user_id, session_id)
    service = ctx.services.artifact_service
    names = await service.list_artifact_keys(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    listed = []
    for name in names:
        versions = await service.list_artifact_versions(
            app_name=app_name, user_id=user_id, session_id=session_id, filename=name
        )
        listed.append(
            {
                "filename": name,
                "scope": "user" if name.startswith(USER_PREFIX) else "session",
                "versions": [
                    camel(ArtifactVersionJSON.model_validate(version, from_attributes=True))
                    for version in versions
                ],
            }
        )
    return listed


@router.post(
    ARTIFACTS,
    summary="Save a Part (text, or base64 inlineData) as the next version of an artifact; "
    "a user event records it (artifactDelta)",
    response_model=None,
    responses=ok(ArtifactUpload, 400, 404, 409, 413, 422),
)
async def upload_artifact(
    app_name: str, user_id: str, session_id: str, body: UploadArtifactRequest, ctx: Server
) -> Any:
    """Under the session's lease: while a run holds the session the upload is refused (409)
    and nothing is saved. Then the version is saved and the event naming it appended."""
    async with held_session(ctx, app_name, user_id, session_id) as session:
        version = await ctx.services.artifact_service.save_artifact(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            filename=body.filename,
            artifact=body.artifact,
        )
        actions = EventActions(artifact_delta={body.filename: version})
        event = await append_user_event(ctx, session, actions)
    return {"filename": body.filename, "version": version, "eventId": event.id}
