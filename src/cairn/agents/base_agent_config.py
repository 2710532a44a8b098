"""The keys every agent config has (``BaseAgentConfig``), as in ADK's YAML schema."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from cairn.agents.common_configs import AgentRefConfig, CodeConfig


class BaseAgentConfig(BaseModel):
    """``agent_class``, ``name``, ``description``, ``sub_agents`` and the agent callbacks.

    The base of every agent config; a custom agent class names its own config class in its
    ``config_type`` (a subclass of this) to declare the keys it takes. Extra keys are
    allowed here (they become the custom class's fields) and refused by the built-in
    agents' configs.
    """

    model_config = ConfigDict(extra="allow")

    agent_class: str = Field(
        default="BaseAgent",
        description="The agent's class: LlmAgent (the default), SequentialAgent, "
        "ParallelAgent, LoopAgent, or the fully qualified name of a BaseAgent subclass.",
    )
    name: str = Field(description="The agent's name.")
    description: str = Field(default="", description="What the agent does.")
    sub_agents: list[AgentRefConfig] | None = Field(
        default=None, description="The sub-agents, by config_path or code."
    )
    before_agent_callbacks: list[CodeConfig] | None = Field(
        default=None, description="Functions called before the agent runs, by name."
    )
    after_agent_callbacks: list[CodeConfig] | None = Field(
        default=None, description="Functions called after the agent ran, by name."
    )
