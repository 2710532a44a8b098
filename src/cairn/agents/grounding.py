"""Grounding found by an agent tool's agent, shown on its caller's answer (ADK's
``propagate_grounding_metadata``).

An ``AgentTool(..., propagate_grounding_metadata=True)`` (``GoogleSearchAgentTool`` is one)
records the grounding of its agent's last answer in the invocation's ``temp:`` state, under
ADK's key; the calling agent's later replies in the invocation then carry it as their
``grounding_metadata``, so that the sources of a search done by a sub-agent reach the
answer built from it. ``temp:`` state is never stored: the log keeps the grounding on the
sub-agent's own events.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from google.genai import types

GROUNDING_STATE_KEY = "temp:_adk_grounding_metadata"
"""Where an agent tool leaves its agent's grounding for the caller (ADK's key)."""


def grounding_to_propagate(state: Any, tools: Iterable[Any]) -> types.GroundingMetadata | None:
    """The grounding an agent's reply takes over: what an agent tool of ``tools`` that
    propagates grounding left in ``state``, or None."""
    if not any(getattr(tool, "propagate_grounding_metadata", False) for tool in tools):
        return None
    found = state.get(GROUNDING_STATE_KEY)
    if not found:
        return None
    if isinstance(found, types.GroundingMetadata):
        return found
    return types.GroundingMetadata.model_validate(found)


def grounding_state_value(grounding: types.GroundingMetadata) -> dict[str, Any]:
    """``grounding`` as plain JSON, the only kind of value state holds."""
    value: dict[str, Any] = grounding.model_dump(mode="json", exclude_none=True)
    return value
