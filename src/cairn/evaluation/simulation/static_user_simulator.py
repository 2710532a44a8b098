"""A simulated user that replays a conversation's user turns as they are written."""

from __future__ import annotations

from typing_extensions import override

from cairn.events.event import Event

from ..eval_case import StaticConversation
from ..evaluator import Evaluator
from .user_simulator import BaseUserSimulatorConfig, NextUserMessage, Status, UserSimulator


class StaticUserSimulator(UserSimulator):
    """Sends each invocation's ``user_content`` in turn, then says the conversation is over."""

    def __init__(self, *, static_conversation: StaticConversation) -> None:
        super().__init__(BaseUserSimulatorConfig(), config_type=BaseUserSimulatorConfig)
        self.static_conversation = static_conversation
        self.invocation_idx = 0

    @override
    async def get_next_user_message(self, events: list[Event]) -> NextUserMessage:
        """The next written user turn (the events are not read); STOP_SIGNAL_DETECTED after
        the last one."""
        if self.invocation_idx >= len(self.static_conversation):
            return NextUserMessage(status=Status.STOP_SIGNAL_DETECTED)
        invocation = self.static_conversation[self.invocation_idx]
        self.invocation_idx += 1
        return NextUserMessage(status=Status.SUCCESS, user_message=invocation.user_content)

    @override
    def get_simulation_evaluator(self) -> Evaluator | None:
        """None: replayed turns need no judging."""
        return None
