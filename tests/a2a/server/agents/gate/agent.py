"""The server tests' gate agent: its tool blocks until the file the message names exists."""

from tests.server.fault_agents.gate.agent import root_agent

__all__ = ["root_agent"]
