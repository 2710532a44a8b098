"""A run as clients see it: the one JSON shape of the HTTP API's run routes and of the
webhook's body."""

from __future__ import annotations

from typing import Any

from cairn.sessions.run_store import StoredRun


def run_json(
    run: StoredRun, *, executor: str | None = None, private: bool = True
) -> dict[str, Any]:
    """The run in camelCase, every key present (null when unset): ids, status, strategy,
    times, attempts, cancel, error, metadata; ``executor`` names who executes it. With
    ``private``, also what was asked (``request``) and the ``webhook`` URL, for the run's
    own user; a webhook's body leaves them out (the URL may hold a token)."""
    data: dict[str, Any] = {
        "appName": run.app_name,
        "userId": run.user_id,
        "sessionId": run.session_id,
        "runId": run.run_id,
        "status": run.status.value,
        "strategy": run.strategy,
        "createdAt": run.created_at,
        "startedAt": run.started_at,
        "endedAt": run.ended_at,
        "cancel": run.cancel.value if run.cancel is not None else None,
        "error": run.error,
        "attempts": run.attempts,
        "metadata": run.metadata,
    }
    if executor is not None:
        data["executor"] = executor
    if private:
        data["request"] = run.request
        data["webhook"] = run.webhook
    return data
