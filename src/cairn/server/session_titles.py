"""What cairn's session routes say about a session besides ADK's ``Session``: its name, its
first message, what to call it (``title``) and, for a fork, its parent and that one's title.

A page's sessions are read in one bounded step, and the parents not on the page in one more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cairn.server.context import ServerContext
from cairn.sessions.session_info import SessionInfo


async def infos_json(
    ctx: ServerContext, app_name: str, owners: Sequence[tuple[str, str]]
) -> list[dict[str, Any]]:
    """``SessionInfoJSON`` of each ``(user_id, session_id)`` that exists, in order."""
    found = await ctx.sessions.get_session_infos(app_name=app_name, sessions=owners)
    parents = [
        (info.user_id, info.forked_from.session_id)
        for info in found.values()
        if info.forked_from is not None
    ]
    missing = [owner for owner in dict.fromkeys(parents) if owner not in found]
    if missing:
        found.update(await ctx.sessions.get_session_infos(app_name=app_name, sessions=missing))
    return [_json(found[owner], found) for owner in owners if owner in found]


def _json(info: SessionInfo, known: dict[tuple[str, str], SessionInfo]) -> dict[str, Any]:
    data: dict[str, Any] = {"userId": info.user_id, "sessionId": info.session_id}
    for key, value in (
        ("name", info.name),
        ("firstMessage", info.first_message),
        ("title", info.title),
    ):
        if value is not None:
            data[key] = value
    if info.forked_from is not None:
        parent = known.get((info.user_id, info.forked_from.session_id))
        lineage: dict[str, Any] = {
            "sessionId": info.forked_from.session_id,
            "exists": parent is not None,
        }
        if info.forked_from.event_id is not None:
            lineage["eventId"] = info.forked_from.event_id
        if parent is not None and parent.title is not None:
            lineage["title"] = parent.title
        data["forkedFrom"] = lineage
    return data
