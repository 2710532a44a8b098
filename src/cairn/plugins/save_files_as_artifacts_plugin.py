"""SaveFilesAsArtifactsPlugin: files the user attaches become artifacts of the session."""

from __future__ import annotations

import copy
import logging
import urllib.parse

from google.genai import types

from cairn.agents.base_agent import BaseAgent
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.plugins.base_plugin import BasePlugin

logger = logging.getLogger(__name__)

MAX_INLINE_DATA_SIZE_BYTES = 20 * 1024 * 1024
"""A file larger than this is refused (the user is told), not saved."""

_MODEL_READABLE_SCHEMES = {"gs", "https", "http"}


class SaveFilesAsArtifactsPlugin(BasePlugin):
    """Saves each inline file of a user message as an artifact and puts a placeholder
    (``[Uploaded Artifact: "name"]``) in its place in the stored message.

    The file's ``display_name`` is the artifact's name (``user:`` prefixed names are kept
    across the user's sessions); a file without one gets ``artifact_<invocation>_<i>``. The
    versions saved are recorded in the ``artifact_delta`` of the first agent's first event
    of the invocation. With ``attach_file_reference`` (the default) and an artifact store
    whose URIs a model can read (``gs://``, ``https://``), a reference to the file follows
    the placeholder.
    """

    def __init__(
        self, name: str = "save_files_as_artifacts_plugin", *, attach_file_reference: bool = True
    ) -> None:
        super().__init__(name)
        self._attach_file_reference = attach_file_reference
        self._pending: dict[str, dict[str, int]] = {}
        """Versions saved for each invocation, until its first agent records them."""

    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        service = invocation_context.artifact_service
        if service is None:
            logger.warning(
                "SaveFilesAsArtifactsPlugin does nothing: the Runner has no artifact_service"
            )
            return None
        if not user_message.parts:
            return None
        parts: list[types.Part] = []
        saved: dict[str, int] = {}
        changed = False
        for index, part in enumerate(user_message.parts):
            blob = part.inline_data
            if blob is None:
                parts.append(part)
                continue
            name = blob.display_name or f"artifact_{invocation_context.invocation_id}_{index}"
            size = len(blob.data or b"")
            if size > MAX_INLINE_DATA_SIZE_BYTES:
                message = (
                    f"File {name} ({size / (1024 * 1024):.2f} MB) is larger than the "
                    f"{MAX_INLINE_DATA_SIZE_BYTES // (1024 * 1024)} MB limit. Upload a "
                    "smaller file."
                )
                logger.warning(message)
                parts.append(types.Part(text=f"[Upload Error: {message}]"))
                changed = True
                continue
            try:
                version = await service.save_artifact(
                    app_name=invocation_context.app_name,
                    user_id=invocation_context.user_id,
                    session_id=invocation_context.session.id,
                    filename=name,
                    artifact=copy.copy(part),
                )
            except Exception:
                logger.exception("could not save the attached file %r as an artifact", name)
                parts.append(part)
                continue
            parts.append(types.Part(text=f'[Uploaded Artifact: "{name}"]'))
            if self._attach_file_reference:
                reference = await self._reference(invocation_context, name, version, blob)
                if reference is not None:
                    parts.append(reference)
            saved[name] = version
            changed = True
        if not changed:
            return None
        if saved:
            self._pending.setdefault(invocation_context.invocation_id, {}).update(saved)
        return types.Content(role=user_message.role, parts=parts)

    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None:
        saved = self._pending.pop(callback_context.invocation_id, None)
        if saved:
            callback_context.actions.artifact_delta.update(saved)
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self._pending.pop(invocation_context.invocation_id, None)

    async def _reference(
        self, ctx: InvocationContext, name: str, version: int, blob: types.Blob
    ) -> types.Part | None:
        """A file part pointing at the saved artifact, when a model can read its URI."""
        try:
            found = await ctx.artifact_service.get_artifact_version(
                app_name=ctx.app_name,
                user_id=ctx.user_id,
                session_id=ctx.session.id,
                filename=name,
                version=version,
            )
        except Exception:
            logger.warning("could not look up version %s of artifact %r", version, name)
            return None
        uri = found.canonical_uri if found is not None else None
        if not uri or urllib.parse.urlparse(uri).scheme.lower() not in _MODEL_READABLE_SCHEMES:
            return None
        return types.Part(
            file_data=types.FileData(
                file_uri=uri,
                mime_type=blob.mime_type or found.mime_type,
                display_name=name,
            )
        )
