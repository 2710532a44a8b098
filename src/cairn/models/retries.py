"""What every model adapter agrees on about retrying: which failures, how long to wait, and
the one loop that tries a call again (``retried``).

Each adapter keeps what is its own, the failures it knows and the error a call ends with,
in a ``decide`` function; the loop keeps what they share: counting attempts, never trying
again once output was shown, waiting, and logging each retry.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

_T = TypeVar("_T")


@dataclasses.dataclass
class Attempts:
    """Where one call's retrying stands, as ``decide`` sees it after a failed attempt."""

    number: int = 1
    """The attempt that just failed, counting from 1."""
    waited: float = 0.0
    """Seconds waited between the attempts so far."""
    output_shown: bool = False
    """Whether the failed attempt had yielded output; it is never tried again then (the
    output would be shown twice), so ``decide`` raises."""
    memo: Any = None
    """What the adapter keeps from one failure for the next (``decide`` sets it)."""


@dataclasses.dataclass(frozen=True)
class Retry:
    """``decide``'s answer when the call is to be tried again."""

    wait: float
    """Seconds to wait first."""
    reason: str
    """What failed, for the log line (``HTTP 503``, ``timeout``...)."""
    limits: str = ""
    """What stops the retries, for the log line (``of 3``...)."""


Decide = Callable[[Exception, Attempts], Retry]
"""An adapter's rule: a ``Retry``, or raises the error the call fails with."""


async def retried(
    attempt: Callable[[], AsyncIterator[_T]],
    decide: Decide,
    *,
    retry_on: tuple[type[Exception], ...],
    sleep: Callable[[float], Awaitable[None]],
    label: str,
    shows_output: Callable[[_T], bool] = lambda item: True,
) -> AsyncGenerator[_T, None]:
    """What ``attempt()`` yields, trying it again while ``decide`` says so.

    Only failures of the ``retry_on`` types go to ``decide``; others pass through as they
    are. ``shows_output`` tells which items count as output shown to the caller (a partial
    response does, a bookkeeping item may not). ``label`` (``"openai model 'gpt-4o'"``)
    starts each retry's log line.
    """
    attempts = Attempts()
    while True:
        attempts.output_shown = False
        try:
            async for item in attempt():
                attempts.output_shown = attempts.output_shown or shows_output(item)
                yield item
            return
        except retry_on as error:
            retry = decide(error, attempts)
            if attempts.output_shown:
                raise  # a rule that would retry shown output is a bug: fail as the call did
        logger.warning(
            "%s: %s, retry %d%s in %.1fs",
            label,
            retry.reason,
            attempts.number,
            f" {retry.limits}" if retry.limits else "",
            retry.wait,
        )
        await sleep(retry.wait)
        attempts.number += 1
        attempts.waited += retry.wait


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
