"""Waiting on a condition, bounded generously: tests wait for readiness, never for time.

The bound only says when to give up on something that will never happen; a slow, loaded
machine just polls longer. The failure names what never became true.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

BOUND_SECONDS = 300.0
"""How long to wait for something that should happen, before calling it a failure."""


def wait_until(condition: Callable[[], object], what: str, *, bound: float = BOUND_SECONDS) -> None:
    """Poll ``condition`` until it is true; fail naming ``what`` after ``bound`` seconds."""
    deadline = time.monotonic() + bound
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not so after waiting {bound:.0f} s")
        time.sleep(0.05)


async def until(
    condition: Callable[[], Awaitable[object]], what: str, *, bound: float = BOUND_SECONDS
) -> None:
    """``wait_until`` for an async ``condition``, without blocking the event loop."""
    deadline = time.monotonic() + bound
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not so after waiting {bound:.0f} s")
        await asyncio.sleep(0.05)
