"""Personas a simulated user adopts: a description and the behaviours it shows."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pydantic import BaseModel, Field

from cairn.errors import NotFoundError

logger = logging.getLogger(__name__)


class UserBehavior(BaseModel):
    """One behaviour of a persona: what the simulated user does, and what breaks it."""

    name: str = Field(description="The behaviour's name.")
    description: str = Field(description="What the behaviour is, for simulator and verifier.")
    behavior_instructions: list[str] = Field(description="Instructions the simulated user follows.")
    violation_rubrics: list[str] = Field(
        description="Signs that a simulated user's message does not show the behaviour."
    )

    def get_behavior_instructions_str(self) -> str:
        """The instructions as a bulleted list."""
        return "\n".join(f"  * {line}" for line in self.behavior_instructions)

    def get_violation_rubrics_str(self) -> str:
        """The violation rubrics as a bulleted list."""
        return "\n".join(f"  * {line}" for line in self.violation_rubrics)


class UserPersona(BaseModel):
    """A persona: an id registries use, a description, and its behaviours."""

    id: str = Field(description="The persona's id, as registries name it.")
    description: str = Field(description="Who the simulated user is.")
    behaviors: Sequence[UserBehavior] = Field(description="The behaviours the persona shows.")


class UserPersonaRegistry:
    """Personas by id."""

    def __init__(self) -> None:
        self._registry: dict[str, UserPersona] = {}

    def get_persona(self, persona_id: str) -> UserPersona:
        """The persona registered under ``persona_id``; NotFoundError when there is none."""
        persona = self._registry.get(persona_id)
        if persona is None:
            known = ", ".join(sorted(self._registry)) or "none"
            raise NotFoundError(
                f"User persona `{persona_id}` is not registered (registered: {known}); "
                "register it with register_persona or write the persona out in full."
            )
        return persona

    def register_persona(self, persona_id: str, user_persona: UserPersona) -> None:
        """Registers (or replaces) the persona under ``persona_id``."""
        if persona_id in self._registry:
            logger.info("Replacing the user persona registered as %s", persona_id)
        self._registry[persona_id] = user_persona

    def get_registered_personas(self) -> list[UserPersona]:
        """Every registered persona."""
        return list(self._registry.values())
