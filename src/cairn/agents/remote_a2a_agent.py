"""ADK's path for ``RemoteA2aAgent`` (which lives in ``cairn.a2a.agent``; needs the ``a2a``
extra: ``pip install 'cairn[a2a]'``)."""

from cairn.a2a.agent.exchanges import A2A_METADATA_PREFIX
from cairn.a2a.agent.remote_a2a_agent import (
    AGENT_CARD_WELL_KNOWN_PATH,
    DEFAULT_TIMEOUT,
    A2AClientError,
    AgentCardResolutionError,
    RemoteA2aAgent,
)

__all__ = [
    "A2A_METADATA_PREFIX",
    "AGENT_CARD_WELL_KNOWN_PATH",
    "DEFAULT_TIMEOUT",
    "A2AClientError",
    "AgentCardResolutionError",
    "RemoteA2aAgent",
]
