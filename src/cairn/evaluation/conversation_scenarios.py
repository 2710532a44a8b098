"""Conversation scenarios: what a simulated user says first, and the plan it follows after."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from cairn.errors import NotFoundError

from .common import EvalBaseModel
from .simulation.pre_built_personas import get_default_persona_registry
from .simulation.user_simulator_personas import UserPersona


def _persona_by_id(persona_id: str) -> UserPersona:
    """The pre-built persona with this id; ValueError (naming the known ids) when none has it."""
    try:
        return get_default_persona_registry().get_persona(persona_id)
    except NotFoundError as error:
        known = ", ".join(p.id for p in get_default_persona_registry().get_registered_personas())
        raise ValueError(
            f"user_persona `{persona_id}` is not a pre-built persona (they are: {known}); "
            "name one of them, or write the persona out as an object (id, description, "
            "behaviors)"
        ) from error


class ConversationScenario(EvalBaseModel):
    """A scenario for a simulated user: its fixed first message and its plan for the rest."""

    starting_prompt: str
    """The first user message, given to the agent as is."""

    conversation_plan: str
    """What the simulated user sets out to do over the conversation, in prose."""

    user_persona: UserPersona | None = Field(default=None)
    """The persona the simulated user adopts (a persona object, or a pre-built persona's id)."""

    @field_validator("user_persona", mode="before")
    @classmethod
    def _persona_from_id(cls, value: Any) -> Any:
        if isinstance(value, str):
            return _persona_by_id(value)
        return value


class ConversationScenarios(EvalBaseModel):
    """A list of scenarios (the shape of a scenarios file)."""

    scenarios: list[ConversationScenario] = Field(
        default_factory=list, description="The scenarios."
    )


class ConversationGenerationConfig(EvalBaseModel):
    """How to generate conversation scenarios with a model."""

    count: int = Field(description="How many scenarios to generate.")
    generation_instruction: str | None = Field(
        default=None, description="An optional goal, in prose, that guides the generation."
    )
    environment_context: str | None = Field(
        default=None,
        description="What the agent's tools can see (their data), so that generated "
        "requests ask about things that exist.",
    )
    model_name: str = Field(description="The model that generates the scenarios.")
