"""The YAML schema of a ``SequentialAgent``."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from cairn.agents.base_agent_config import BaseAgentConfig


class SequentialAgentConfig(BaseAgentConfig):
    """``agent_class: SequentialAgent``: runs its ``sub_agents`` one after another."""

    model_config = ConfigDict(extra="forbid")

    agent_class: str = Field(default="SequentialAgent")
