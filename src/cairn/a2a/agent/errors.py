"""The typed errors of calling a remote A2A agent (ADK's names)."""

from __future__ import annotations

from cairn.errors import CairnError


class AgentCardResolutionError(CairnError):
    """A remote agent's card could not be had or used: the URL did not answer, the file is
    missing, the JSON is not a card, or the card names no endpoint this client may call.
    The message names the remote agent, the card's source and what to fix."""


class A2AClientError(CairnError):
    """A call to a remote A2A agent failed: the remote answered with an error, or could not
    be reached. The message names the remote agent, its endpoint and the cause."""


__all__ = ["A2AClientError", "AgentCardResolutionError"]
