"""transfer_to_agent: the tool an LlmAgent hands the conversation to another agent with."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn.tools.function_tool import FunctionTool


def transfer_to_agent(agent_name: str, tool_context: Any) -> None:
    """Hand the conversation to another agent that is better suited to answer the user.

    Args:
        agent_name: the name of the agent to hand the conversation to.
    """
    tool_context.actions.transfer_to_agent = agent_name


class TransferToAgentTool(FunctionTool):
    """``transfer_to_agent`` whose declaration lists the agents it may name (an enum), so a
    model picks one of them rather than inventing a name."""

    def __init__(self, agent_names: list[str]) -> None:
        super().__init__(transfer_to_agent)
        self.agent_names = list(agent_names)

    def declaration(self) -> types.FunctionDeclaration:
        declared = super().declaration()
        schema = dict(declared.parameters_json_schema or {})
        properties = dict(schema.get("properties") or {})
        properties["agent_name"] = {**properties.get("agent_name", {}), "enum": self.agent_names}
        schema["properties"] = properties
        return declared.model_copy(update={"parameters_json_schema": schema})


__all__ = ["TransferToAgentTool", "transfer_to_agent"]
