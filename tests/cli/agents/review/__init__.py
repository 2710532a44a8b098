"""ADK's package layout: the package imports its ``agent`` module, which holds root_agent."""

from . import agent

__all__ = ["agent"]
