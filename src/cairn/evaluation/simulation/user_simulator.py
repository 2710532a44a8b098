"""The interface of a simulated user: the runner asks it for each next user message."""

from __future__ import annotations

import enum
from abc import ABC

from google.genai import types as genai_types
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    alias_generators,
    model_validator,
)

from cairn.events.event import Event

from ..common import EvalBaseModel
from ..evaluator import Evaluator


class BaseUserSimulatorConfig(BaseModel):
    """The settings every user simulator's config shares.

    Each concrete config sets ``type`` to a ``Literal`` of its own (``"llm_backed"``); the eval
    config picks the concrete class by it, and ``UserSimulatorProvider`` the simulator. The
    base's ``type`` is None: a bare base config names no simulator.
    """

    model_config = ConfigDict(
        alias_generator=alias_generators.to_camel, populate_by_name=True, extra="allow"
    )

    type: str | None = Field(
        default=None, description="Which simulator this config is for (set by each subclass)."
    )


class Status(enum.Enum):
    """Why ``get_next_user_message`` did or did not give a message."""

    SUCCESS = "success"
    TURN_LIMIT_REACHED = "turn_limit_reached"
    STOP_SIGNAL_DETECTED = "stop_signal_detected"
    NO_MESSAGE_GENERATED = "no_message_generated"


class NextUserMessage(EvalBaseModel):
    """The simulator's answer: a user message (status SUCCESS), or why there is none."""

    status: Status = Field(
        description="SUCCESS with a message; otherwise why the conversation ends here."
    )
    user_message: genai_types.Content | None = Field(
        default=None, description="The message to send to the agent (only with SUCCESS)."
    )

    @model_validator(mode="after")
    def _message_exactly_on_success(self) -> NextUserMessage:
        if (self.status == Status.SUCCESS) != (self.user_message is not None):
            raise ValueError(
                f"NextUserMessage with status {self.status.name} "
                + (
                    "needs a user_message"
                    if self.status == Status.SUCCESS
                    else "has a user_message"
                )
                + "; give a user_message exactly when the status is SUCCESS."
            )
        return self


class UserSimulator(ABC):  # noqa: B024 (as in ADK: subclasses override, nothing is abstract)
    """Plays the user of one eval case: make one simulator per case."""

    def __init__(
        self, config: BaseUserSimulatorConfig, config_type: type[BaseUserSimulatorConfig]
    ) -> None:
        # The config may come as the base class (or another subclass); read it as ours.
        try:
            self._config = config_type.model_validate(config.model_dump())
        except ValidationError as error:
            raise ValueError(
                f"{type(self).__name__} needs a {config_type.__name__}; the config given "
                f"({type(config).__name__}) does not validate as one: {error}"
            ) from error

    async def get_next_user_message(self, events: list[Event]) -> NextUserMessage:
        """The next message to send to the agent, given the conversation's events so far
        (as the session has them), or a status saying why the conversation ends."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_next_user_message")

    def get_simulation_evaluator(self) -> Evaluator | None:
        """An evaluator judging whether the simulation went as it should, if there is one."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_simulation_evaluator")


# Config class -> the simulator that reads it. A simulator module registers itself here (the
# built-in ones are registered by user_simulator_provider), so the provider needs no change.
_SIMULATOR_BY_CONFIG_TYPE: dict[type[BaseUserSimulatorConfig], type[UserSimulator]] = {}


def register_user_simulator(
    config_type: type[BaseUserSimulatorConfig], simulator_type: type[UserSimulator]
) -> None:
    """Makes ``UserSimulatorProvider`` build ``simulator_type`` for configs of ``config_type``."""
    _SIMULATOR_BY_CONFIG_TYPE[config_type] = simulator_type
