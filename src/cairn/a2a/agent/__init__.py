"""Calling remote A2A agents: ``RemoteA2aAgent`` and its configuration (ADK's
``google.adk.a2a.agent``). docs/a2a.md is the guide."""

from cairn.a2a.agent.config import (
    A2aCardRequestConfig,
    A2aRemoteAgentConfig,
    CardRequestInterceptor,
    ParametersConfig,
    RequestInterceptor,
)
from cairn.a2a.agent.errors import A2AClientError, AgentCardResolutionError
from cairn.a2a.agent.remote_a2a_agent import RemoteA2aAgent

__all__ = [
    "A2AClientError",
    "A2aCardRequestConfig",
    "A2aRemoteAgentConfig",
    "AgentCardResolutionError",
    "CardRequestInterceptor",
    "ParametersConfig",
    "RemoteA2aAgent",
    "RequestInterceptor",
]
