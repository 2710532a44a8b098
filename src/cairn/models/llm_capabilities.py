"""What a model instance can do, as it reports it (ADK's ``LlmCapabilities``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LlmCapabilities(BaseModel):
    """The capabilities a model reports through ``BaseLlm.capabilities``: each field is the
    answer for this model, not an override. Frozen; a model class that knows better says
    so by overriding ``capabilities``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    output_schema_and_tools: bool = Field(
        default=False,
        description="Whether the model can use an output schema together with tools.",
    )
