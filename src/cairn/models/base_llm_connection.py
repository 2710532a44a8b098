"""TEMP stub so ADK's testing_utils imports (drop at merge; helper `agents` adds the real one)."""

from __future__ import annotations


class BaseLlmConnection:
    """TEMP placeholder."""
