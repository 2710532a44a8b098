"""``a2a_experimental``: google-adk marks its A2A API experimental with it; in cairn the A2A API
is stable, and the decorator returns what it decorates unchanged."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def a2a_experimental(target: T) -> T:
    """Returns ``target`` as it is (cairn's A2A API is not experimental)."""
    return target
