"""The YAML schema of a ``ParallelAgent``."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from cairn.agents.base_agent_config import BaseAgentConfig


class ParallelAgentConfig(BaseAgentConfig):
    """``agent_class: ParallelAgent``: runs its ``sub_agents`` at the same time."""

    model_config = ConfigDict(extra="forbid")

    agent_class: str = Field(default="ParallelAgent")
