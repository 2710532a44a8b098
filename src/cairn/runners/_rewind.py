"""The event that rewinds a session to just before one of its invocations."""

from __future__ import annotations

from typing import Any

from cairn.artifacts.base_artifact_service import BaseArtifactService
from cairn.errors import InvocationNotFoundError
from cairn.events.event import Event
from cairn.events.event_actions import EventActions
from cairn.events.rewind import replay_rewinds
from cairn.sessions.fold import artifact_versions_of, session_state_of
from cairn.sessions.scopes import USER_PREFIX, split_by_scope
from cairn.sessions.session import Session

_MISSING = object()


def rewind_start(session: Session, invocation_id: str) -> int:
    """The log position of the invocation's first event still in effect.

    ``session.events`` must be the whole log. Raises ``InvocationNotFoundError``
    when the invocation is not in the session or was rewound already.
    """
    in_effect, _ = replay_rewinds(session.events)
    first = next((e for e in in_effect if e.invocation_id == invocation_id), None)
    if first is None or first.actions.rewind_before_invocation_id is not None:
        raise InvocationNotFoundError(
            app_name=session.app_name,
            user_id=session.user_id,
            session_id=session.id,
            invocation_id=invocation_id,
        )
    return next(i for i, e in enumerate(session.events) if e is first)


async def rewind_event(
    session: Session,
    *,
    initial_state: dict[str, Any],
    rewind_before_invocation_id: str,
    invocation_id: str,
    artifact_service: BaseArtifactService | None,
) -> Event:
    """The rewind event: it restores the session's state as before the invocation.

    Session-scope state keys that changed since are set back, keys that did not
    exist then are removed; ``app:`` and ``user:`` keys are shared with other
    sessions and left alone. Session artifacts changed since are restored by
    saving their earlier version again as a new version (recorded in the
    event's ``artifact_delta``); those created since are deleted. ``user:``
    artifacts are shared and left alone.
    """
    start = rewind_start(session, rewind_before_invocation_id)
    earlier = session.events[:start]
    before = session_state_of(initial_state, earlier)
    now = split_by_scope(session.state).session
    delta = {key: value for key, value in before.items() if now.get(key, _MISSING) != value}
    removed = sorted(key for key in now if key not in before)
    artifacts: dict[str, int] = {}
    if artifact_service is not None:
        artifacts = await _restore_artifacts(session, earlier, artifact_service)
    return Event(
        invocation_id=invocation_id,
        author="user",
        actions=EventActions(
            rewind_before_invocation_id=rewind_before_invocation_id,
            state_delta=delta,
            removed_state_keys=removed or None,
            artifact_delta=artifacts,
        ),
    )


async def _restore_artifacts(
    session: Session, earlier: list[Event], service: BaseArtifactService
) -> dict[str, int]:
    then = artifact_versions_of(replay_rewinds(earlier)[0])
    now = artifact_versions_of(replay_rewinds(session.events)[0])
    owner: dict[str, Any] = {
        "app_name": session.app_name,
        "user_id": session.user_id,
        "session_id": session.id,
    }
    restored: dict[str, int] = {}
    for filename, version in sorted(now.items()):
        if filename.startswith(USER_PREFIX) or then.get(filename) == version:
            continue
        if filename not in then:
            await service.delete_artifact(**owner, filename=filename)
            continue
        part = await service.load_artifact(**owner, filename=filename, version=then[filename])
        if part is not None:
            restored[filename] = await service.save_artifact(
                **owner, filename=filename, artifact=part
            )
    return restored
