"""Planning with the model's own thinking (Gemini's thinking config)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from google.genai import types

from cairn.planners.base_planner import BasePlanner

if TYPE_CHECKING:
    from cairn.agents.context import Context
    from cairn.agents.readonly_context import ReadonlyContext
    from cairn.models.llm_request import LlmRequest

logger = logging.getLogger(__name__)


class BuiltInPlanner(BasePlanner):
    """Sends ``thinking_config`` with every model call (it replaces one set in the agent's
    ``generate_content_config``). The model's thought parts stay in the events, marked
    ``thought``; they are not the answer."""

    thinking_config: types.ThinkingConfig

    def __init__(self, *, thinking_config: types.ThinkingConfig) -> None:
        self.thinking_config = thinking_config

    def apply_thinking_config(self, llm_request: LlmRequest) -> None:
        """Put this planner's thinking config on ``llm_request``."""
        if not self.thinking_config:
            return
        if llm_request.config.thinking_config is not None:
            logger.debug("the planner's thinking_config replaces generate_content_config's")
        llm_request.config.thinking_config = self.thinking_config

    def build_planning_instruction(
        self, readonly_context: ReadonlyContext, llm_request: LlmRequest
    ) -> str | None:
        return None

    def process_planning_response(
        self, callback_context: Context, response_parts: list[types.Part]
    ) -> list[types.Part] | None:
        return None


__all__ = ["BuiltInPlanner"]
