"""What the evaluation knows about the app under test: its agents, instructions and tools."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .common import EvalBaseModel


class AgentDetails(EvalBaseModel):
    """One agent of the app (the root agent or a sub-agent)."""

    name: str
    instructions: str = Field(default="")
    # Tool declarations (google.genai tool objects at run time); Any keeps the JSON schema simple.
    tool_declarations: list[Any] = Field(default_factory=list)


class AppDetails(EvalBaseModel):
    """The agents of the app, by name."""

    agent_details: dict[str, AgentDetails] = Field(default_factory=dict)

    def get_developer_instructions(self, agent_name: str) -> str:
        """The instructions of the named agent; ValueError when the app has no such agent."""
        details = self.agent_details.get(agent_name)
        if details is None:
            known = ", ".join(sorted(self.agent_details)) or "none"
            raise ValueError(f"Agent `{agent_name}` is not part of the app (its agents: {known}).")
        return details.instructions

    def get_tools_by_agent_name(self) -> dict[str, list[Any]]:
        """Each agent's tool declarations, keyed by agent name."""
        return {name: details.tool_declarations for name, details in self.agent_details.items()}
