"""What a model response records about the context cache its request used (ADK's ``CacheMetadata``).

It lives on the events (``Event.cache_metadata``), so the next request of the same agent
finds the cache in the session's log, in any process: the log, not a process's memory,
says which cache to reuse.
"""

from __future__ import annotations

import time

from pydantic import BaseModel, ConfigDict, Field, model_validator

_EXPIRY_MARGIN = 120.0
"""Seconds before its expiry from which a cache counts as expiring soon."""


class CacheMetadata(BaseModel):
    """A context cache, or the fingerprint of a prefix that may be cached next time.

    Active: ``cache_name`` (the provider's resource name, e.g. ``cachedContents/abc``),
    ``expire_time`` and ``invocations_used`` are set, and the first ``contents_count``
    contents of the request are in the cache. Fingerprint only: those three are None,
    and ``fingerprint`` identifies the first ``contents_count`` contents (with the
    instruction and tools), so that the next request can tell whether that prefix held
    still and is worth caching. Token counts are in the response's ``usage_metadata``.
    Serialized with snake_case keys, as ADK writes it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    cache_name: str | None = None
    expire_time: float | None = None
    """Epoch seconds at which the provider drops the cache."""
    fingerprint: str
    invocations_used: int | None = Field(default=None, ge=0)
    """Invocations that have used this cache (1 for the one that created it)."""
    contents_count: int = Field(ge=0)
    created_at: float | None = None
    """Epoch seconds at which the cache was created."""

    @model_validator(mode="after")
    def _active_or_fingerprint_only(self) -> CacheMetadata:
        active = [self.cache_name, self.expire_time, self.invocations_used]
        if any(v is None for v in active) and any(v is not None for v in active):
            raise ValueError(
                "CacheMetadata is either an active cache (cache_name, expire_time and "
                "invocations_used all set) or a fingerprint only (all three None); got "
                f"cache_name={self.cache_name!r}, expire_time={self.expire_time!r}, "
                f"invocations_used={self.invocations_used!r}"
            )
        return self

    @property
    def expire_soon(self) -> bool:
        """The cache expires within two minutes (False for a fingerprint only)."""
        if self.expire_time is None:
            return False
        return time.time() > self.expire_time - _EXPIRY_MARGIN

    def __str__(self) -> str:
        if self.cache_name is None:
            return f"fingerprint {self.fingerprint[:8]} of {self.contents_count} contents"
        return (
            f"cache {self.cache_name.rsplit('/', 1)[-1]} of {self.contents_count} contents, "
            f"used by {self.invocations_used} invocations"
        )
