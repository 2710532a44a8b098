"""The base of planners: what shapes how an agent's model plans before it acts."""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING

from google.genai import types

if TYPE_CHECKING:
    from cairn.agents.context import Context
    from cairn.agents.readonly_context import ReadonlyContext
    from cairn.models.llm_request import LlmRequest


class BasePlanner(abc.ABC):
    """Set one as ``LlmAgent(planner=...)``.

    Before each model call, ``build_planning_instruction`` may add an instruction;
    after it, ``process_planning_response`` may rewrite the reply's parts (marking
    planning as ``thought``, which is kept in the event and never shown or saved
    as the answer).
    """

    @abc.abstractmethod
    def build_planning_instruction(
        self, readonly_context: ReadonlyContext, llm_request: LlmRequest
    ) -> str | None:
        """Text to add to the system instruction of ``llm_request`` (which is not to be
        changed here), or None."""

    @abc.abstractmethod
    def process_planning_response(
        self, callback_context: Context, response_parts: list[types.Part]
    ) -> list[types.Part] | None:
        """The reply's parts as the agent should keep them, or None to keep them as they
        are. ``callback_context.state`` writes are recorded on the reply's event."""


__all__ = ["BasePlanner"]
