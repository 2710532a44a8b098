"""A simulated user driven by a model: it follows a scenario's plan (and persona) turn by turn.

The first message is the scenario's ``starting_prompt``, sent as is. Each later one is the
model's reply to the instructions of llm_backed_user_simulator_prompts, which carry the plan,
the persona and the conversation so far. The conversation ends when the model's reply holds
the stop signal (``</finished>``, any case) or after ``max_allowed_invocations`` messages.
"""

from __future__ import annotations

import contextlib
import logging
from typing import ClassVar, Literal, cast

from google.genai import types as genai_types
from pydantic import ConfigDict, Field, field_validator
from typing_extensions import override

from cairn.events.event import Event
from cairn.models.base_llm import BaseLlm
from cairn.models.llm_request import LlmRequest
from cairn.models.registry import LLMRegistry

from ..conversation_scenarios import ConversationScenario
from ..errors import UserSimulationError
from ..evaluator import Evaluator
from .llm_backed_user_simulator_prompts import (
    get_llm_backed_user_simulator_prompt,
    is_valid_user_simulator_template,
)
from .user_simulator import BaseUserSimulatorConfig, NextUserMessage, Status, UserSimulator

logger = logging.getLogger(__name__)

_USER = "user"
_STOP_SIGNAL = "</finished>"


def _default_model_configuration() -> genai_types.GenerateContentConfig:
    return genai_types.GenerateContentConfig(
        thinking_config=genai_types.ThinkingConfig(include_thoughts=True, thinking_budget=10240)
    )


class LlmBackedUserSimulatorConfig(BaseUserSimulatorConfig):
    """The settings of the model-driven simulated user (``"type": "llm_backed"``)."""

    # Unlike the base, unknown keys are refused: a misspelt setting is an error.
    model_config = ConfigDict(extra="forbid")

    type: Literal["llm_backed"] = Field(
        default="llm_backed", description="Selects this simulator in an eval config."
    )
    model: str = Field(
        default="gemini-2.5-flash",
        description="The simulated user's model, a name cairn.models.registry resolves.",
    )
    model_configuration: genai_types.GenerateContentConfig = Field(
        default_factory=_default_model_configuration,
        description="Generation settings for the simulated user's model.",
    )
    max_allowed_invocations: int = Field(
        default=20,
        description="At most this many user messages (the starting prompt included), which "
        "stops an agent and a simulated user that would talk forever; -1 for no limit (not "
        "recommended).",
    )
    custom_instructions: str | None = Field(
        default=None,
        description="Your own instructions for the simulated user, a Jinja template using "
        "{{ stop_signal }}, {{ conversation_plan }} and {{ conversation_history }} (and "
        "{{ persona }} for scenarios with a persona).",
    )
    include_function_calls: bool = Field(
        default=False,
        description="Whether the conversation shown to the simulated user includes the "
        "agent's tool calls and their results.",
    )

    @field_validator("custom_instructions")
    @classmethod
    def _instructions_use_the_variables(cls, value: str | None) -> str | None:
        required = ["stop_signal", "conversation_plan", "conversation_history"]
        if value is not None and not is_valid_user_simulator_template(value, required):
            raise ValueError(
                "custom_instructions must be a Jinja template using each of "
                "{{ stop_signal }}, {{ conversation_plan }} and {{ conversation_history }}"
            )
        return value


class LlmBackedUserSimulator(UserSimulator):
    """Plays a scenario's user with a model."""

    config_type: ClassVar[type[LlmBackedUserSimulatorConfig]] = LlmBackedUserSimulatorConfig

    def __init__(
        self, *, config: BaseUserSimulatorConfig, conversation_scenario: ConversationScenario
    ) -> None:
        super().__init__(config, config_type=LlmBackedUserSimulator.config_type)
        self._conversation_scenario = conversation_scenario
        self._invocation_count = 0
        self._llm: BaseLlm = LLMRegistry.new_llm(self._llm_config.model)
        self._user_persona = conversation_scenario.user_persona

    @property
    def _llm_config(self) -> LlmBackedUserSimulatorConfig:
        return cast(LlmBackedUserSimulatorConfig, self._config)

    @classmethod
    def _summarize_conversation(
        cls, events: list[Event], include_function_calls: bool = False
    ) -> str:
        """The conversation as ``author: text`` lines: thoughts left out, and tool calls and
        results unless ``include_function_calls``."""
        lines: list[str] = []
        for event in events:
            for part in (event.content.parts or []) if event.content else []:
                if part.text and not part.thought:
                    lines.append(f"{event.author}: {part.text}")
                elif include_function_calls and part.function_call:
                    call = part.function_call
                    lines.append(f"{event.author} called tool '{call.name}' with args: {call.args}")
                elif include_function_calls and part.function_response:
                    result = part.function_response
                    lines.append(f"Tool '{result.name}' returned: {result.response}")
        return "\n\n".join(lines)

    async def _get_llm_response(self, rewritten_dialogue: str) -> tuple[str, str | None]:
        """The model's text for the next user message, and why it is empty when it is."""
        if self._invocation_count == 0:
            return self._conversation_scenario.starting_prompt, None
        instructions = get_llm_backed_user_simulator_prompt(
            conversation_plan=self._conversation_scenario.conversation_plan,
            conversation_history=rewritten_dialogue,
            stop_signal=_STOP_SIGNAL,
            custom_instructions=self._llm_config.custom_instructions,
            user_persona=self._user_persona,
        )
        request = LlmRequest(
            model=self._llm_config.model,
            config=self._llm_config.model_configuration.model_copy(deep=True),
            contents=[genai_types.Content(role=_USER, parts=[genai_types.Part(text=instructions)])],
        )
        text = ""
        only_thoughts = False
        async with contextlib.aclosing(self._llm.generate_content_async(request)) as responses:
            async for response in responses:
                if response.error_code:
                    logger.warning(
                        "The user simulator's model returned error %s: %s",
                        response.error_code,
                        response.error_message,
                    )
                    return "", f"the model returned error {response.error_code}"
                for part in (response.content.parts or []) if response.content else []:
                    if part.thought:
                        only_thoughts = True
                    elif part.text:
                        text += part.text
        if text:
            return text, None
        return (
            "",
            "the model returned only thoughts" if only_thoughts else "the model's reply was empty",
        )

    @override
    async def get_next_user_message(self, events: list[Event]) -> NextUserMessage:
        """The starting prompt first, then the model's message; TURN_LIMIT_REACHED once
        ``max_allowed_invocations`` messages were given, STOP_SIGNAL_DETECTED when the model
        ends the conversation. UserSimulationError when the model gives no text."""
        limit = self._llm_config.max_allowed_invocations
        if 0 <= limit <= self._invocation_count:
            logger.warning("The user simulator reached its limit of %d messages", limit)
            return NextUserMessage(status=Status.TURN_LIMIT_REACHED)
        dialogue = self._summarize_conversation(events, self._llm_config.include_function_calls)
        text, empty_reason = await self._get_llm_response(dialogue)
        self._invocation_count += 1
        if _STOP_SIGNAL in text.lower():
            logger.info("The simulated user ended the conversation")
            return NextUserMessage(status=Status.STOP_SIGNAL_DETECTED)
        if text:
            return NextUserMessage(
                status=Status.SUCCESS,
                user_message=genai_types.Content(role=_USER, parts=[genai_types.Part(text=text)]),
            )
        raise UserSimulationError(
            f"The user simulator's model `{self._llm_config.model}` gave no user message "
            f"({empty_reason}) in the scenario starting "
            f"{self._conversation_scenario.starting_prompt!r}. "
            "Check the model (its safety settings and thinking budget, in model_configuration) "
            "or use another model in the eval config's user_simulator_config."
        )

    @override
    def get_simulation_evaluator(self) -> Evaluator | None:
        """Not provided (as in ADK): judge the simulated user with the
        per_turn_user_simulator_quality_v1 metric instead."""
        raise NotImplementedError(
            "LlmBackedUserSimulator has no simulation evaluator; add the "
            "per_turn_user_simulator_quality_v1 metric to the eval config's criteria instead."
        )
