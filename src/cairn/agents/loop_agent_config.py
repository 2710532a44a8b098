"""The YAML schema of a ``LoopAgent``."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from cairn.agents.base_agent_config import BaseAgentConfig


class LoopAgentConfig(BaseAgentConfig):
    """``agent_class: LoopAgent``: runs its ``sub_agents`` in rounds, at most
    ``max_iterations`` of them (until one escalates, e.g. with the ``exit_loop`` tool)."""

    model_config = ConfigDict(extra="forbid")

    agent_class: str = Field(default="LoopAgent")
    max_iterations: int | None = Field(default=None, description="At most this many rounds.")
