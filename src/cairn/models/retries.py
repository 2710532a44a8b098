"""What every model adapter agrees on about retrying: which failures, and how long to wait."""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


def is_retryable_status(status: int) -> bool:
    """Rate limits (429), overload (529) and server errors (5xx) are worth another try."""
    return status == 429 or status >= 500


def backoff_seconds(attempt: int, *, first: float, longest: float) -> float:
    """Exponential backoff with jitter: about ``first``, 2x, 4x ... up to ``longest``."""
    return min(longest, first * 2.0 ** (attempt - 1)) * random.uniform(0.75, 1.0)


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The wait a response asks for: ``retry-after-ms``, or ``Retry-After`` in seconds or as
    an HTTP date (header names in any case); None when it asks for nothing readable."""
    lowered = {name.lower(): value for name, value in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds:
        try:
            return max(float(milliseconds) / 1000, 0.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)
