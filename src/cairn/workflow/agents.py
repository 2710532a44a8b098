"""ADK's shell agents, which live in ``cairn.agents`` (they are agents, not workflows); kept
here so that ``from cairn.workflow import SequentialAgent`` still works."""

from cairn.agents.loop_agent import LoopAgent
from cairn.agents.parallel_agent import ParallelAgent
from cairn.agents.sequential_agent import SequentialAgent

__all__ = ["LoopAgent", "ParallelAgent", "SequentialAgent"]
