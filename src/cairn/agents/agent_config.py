"""``AgentConfig``: the whole YAML schema of an agent, one config class per ``agent_class``."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Discriminator, RootModel, Tag

from cairn.agents.base_agent_config import BaseAgentConfig
from cairn.agents.llm_agent_config import LlmAgentConfig
from cairn.agents.loop_agent_config import LoopAgentConfig
from cairn.agents.parallel_agent_config import ParallelAgentConfig
from cairn.agents.sequential_agent_config import SequentialAgentConfig

_BUILT_IN = frozenset({"LlmAgent", "LoopAgent", "ParallelAgent", "SequentialAgent"})


def agent_config_discriminator(v: Any) -> str:
    """The tag of the config class that validates ``v``: its ``agent_class`` if built in
    (``LlmAgent`` when absent), else ``BaseAgent`` (a custom class's keys are its own)."""
    if not isinstance(v, dict):
        raise ValueError(f"an agent config is a mapping of keys, not {type(v).__name__}")
    agent_class = v.get("agent_class", "LlmAgent")
    return agent_class if agent_class in _BUILT_IN else "BaseAgent"


ConfigsUnion = Annotated[
    Annotated[LlmAgentConfig, Tag("LlmAgent")]
    | Annotated[LoopAgentConfig, Tag("LoopAgent")]
    | Annotated[ParallelAgentConfig, Tag("ParallelAgent")]
    | Annotated[SequentialAgentConfig, Tag("SequentialAgent")]
    | Annotated[BaseAgentConfig, Tag("BaseAgent")],
    Discriminator(agent_config_discriminator),
]


class AgentConfig(RootModel[ConfigsUnion]):
    """A ``root_agent.yaml`` (or any agent's YAML file) validated against its class's schema
    (``AgentConfig.model_validate(data).root`` is the ``LlmAgentConfig`` & co)."""
