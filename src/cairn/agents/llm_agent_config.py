"""The YAML schema of an ``LlmAgent`` (the default ``agent_class``), as ADK's."""

from __future__ import annotations

from typing import Literal

from google.genai import types
from pydantic import ConfigDict, Field, model_validator

from cairn.agents.base_agent_config import BaseAgentConfig
from cairn.agents.common_configs import CodeConfig
from cairn.tools.tool_configs import ToolConfig


class LlmAgentConfig(BaseAgentConfig):
    """An ``LlmAgent``: ``model`` (or ``model_code``), ``instruction``, ``tools``, the model and
    tool callbacks, schemas by reference, and ``generate_content_config``."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    agent_class: str = Field(default="LlmAgent")
    model: str | None = Field(
        default=None,
        description="A model string (gemini-2.5-flash, openai/gpt-4o-mini, ...); unset, the "
        "agent uses its parent's model or the default.",
    )
    model_code: CodeConfig | None = Field(
        default=None,
        description="A model object (a BaseLlm) by fully qualified name, instead of `model`.",
    )
    instruction: str = Field(description="The instruction, with {state_key} placeholders.")
    static_instruction: str | types.Content | types.Part | list[str | types.Part] | None = Field(
        default=None, description="Content sent first, as it is (no placeholders)."
    )
    disallow_transfer_to_parent: bool | None = None
    disallow_transfer_to_peers: bool | None = None
    input_schema: CodeConfig | None = Field(
        default=None, description="A pydantic model class, by fully qualified name."
    )
    output_schema: CodeConfig | None = Field(
        default=None, description="A pydantic model class, by fully qualified name."
    )
    output_key: str | None = Field(default=None, description="Save the final reply here.")
    include_contents: Literal["default", "none"] = "default"
    tools: list[ToolConfig] | None = Field(
        default=None, description="Tools by built-in name or fully qualified name, with args."
    )
    before_model_callbacks: list[CodeConfig] | None = None
    after_model_callbacks: list[CodeConfig] | None = None
    before_tool_callbacks: list[CodeConfig] | None = None
    after_tool_callbacks: list[CodeConfig] | None = None
    generate_content_config: types.GenerateContentConfig | None = None

    @model_validator(mode="after")
    def _one_model(self) -> LlmAgentConfig:
        if self.model and self.model_code:
            raise ValueError(
                f"set one of `model` ({self.model!r}) or `model_code` "
                f"({self.model_code.name!r}), not both"
            )
        return self
