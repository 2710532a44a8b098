"""Read options and list results of session services."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cairn.events._base import CamelModel
from cairn.sessions.session import Session


class GetSessionConfig(BaseModel):
    """Which events ``get_session`` returns; the store applies it, never the caller.

    ``num_recent_events``: keep only the last N (``0`` returns no events;
    ``None`` keeps all). ``after_timestamp``: keep events whose timestamp is
    ``>=`` it (inclusive; ``0.0`` filters like any other number, ``None`` does
    not). With both, the result is the last N events at or after the timestamp.
    """

    model_config = ConfigDict(extra="forbid")

    num_recent_events: int | None = None
    after_timestamp: float | None = None
    after_revision: int | None = Field(default=None, ge=0)
    """cairn: keep only events appended after this revision (the first has revision 1), e.g.
    to read just what is new since an earlier read."""

    @field_validator("num_recent_events")
    @classmethod
    def _not_negative(cls, value: int | None) -> int | None:
        if value is not None and value < 0:
            raise ValueError(
                f"num_recent_events must be >= 0 (0 returns no events, None returns all); "
                f"got {value}"
            )
        return value


class ListSessionsResponse(CamelModel):
    """Sessions with their merged state and no events, oldest update first."""

    sessions: list[Session] = Field(default_factory=list)
