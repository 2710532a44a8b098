"""Chooses each eval case's simulated user from the eval config's ``user_simulator_config``."""

from __future__ import annotations

from typing import Protocol, cast

from ..conversation_scenarios import ConversationScenario
from ..eval_case import EvalCase
from .llm_backed_user_simulator import LlmBackedUserSimulator, LlmBackedUserSimulatorConfig
from .static_user_simulator import StaticUserSimulator
from .user_simulator import (
    _SIMULATOR_BY_CONFIG_TYPE,
    BaseUserSimulatorConfig,
    UserSimulator,
    register_user_simulator,
)

register_user_simulator(LlmBackedUserSimulatorConfig, LlmBackedUserSimulator)

# No config: the model-driven simulator, as before configs had a type.
_DEFAULT_CONFIG_TYPE: type[BaseUserSimulatorConfig] = LlmBackedUserSimulatorConfig


class _ScenarioSimulatorFactory(Protocol):
    def __call__(
        self, *, config: BaseUserSimulatorConfig, conversation_scenario: ConversationScenario
    ) -> UserSimulator: ...


class UserSimulatorProvider:
    """Makes the simulated user of each eval case.

    A case with a written ``conversation`` gets a StaticUserSimulator replaying it; a case with
    a ``conversation_scenario`` gets the simulator registered (``register_user_simulator``)
    for the type of ``user_simulator_config``, the model-driven one by default.
    """

    def __init__(self, user_simulator_config: BaseUserSimulatorConfig | None = None) -> None:
        if user_simulator_config is None:
            user_simulator_config = _DEFAULT_CONFIG_TYPE()
        elif not isinstance(user_simulator_config, BaseUserSimulatorConfig):
            raise ValueError(
                "UserSimulatorProvider needs a user simulator config (a "
                f"BaseUserSimulatorConfig subclass), not a {type(user_simulator_config).__name__}"
                "; pass EvalConfig.user_simulator_config, or e.g. LlmBackedUserSimulatorConfig()."
            )
        self._user_simulator_config = user_simulator_config

    def provide(self, eval_case: EvalCase) -> UserSimulator:
        """A new simulator for ``eval_case`` (make one per case: simulators keep state)."""
        conversation, scenario = eval_case.conversation, eval_case.conversation_scenario
        if (conversation is None) == (scenario is None):
            raise ValueError(
                f"Eval case `{eval_case.eval_id}` has "
                + ("neither" if conversation is None else "both")
                + " a `conversation` and a `conversation_scenario`; give exactly one."
            )
        if conversation is not None:
            return StaticUserSimulator(static_conversation=conversation)
        assert scenario is not None
        config = self._user_simulator_config
        config_type = type(config)
        simulator = _SIMULATOR_BY_CONFIG_TYPE.get(config_type)
        if simulator is None:
            registered = ", ".join(sorted(t.__name__ for t in _SIMULATOR_BY_CONFIG_TYPE))
            raise ValueError(
                f"No user simulator is registered for {config_type.__name__} (registered: "
                f"{registered}); register one with register_user_simulator(config_type, "
                "simulator_type)."
            )
        factory = cast(_ScenarioSimulatorFactory, simulator)
        return factory(config=config, conversation_scenario=scenario)
