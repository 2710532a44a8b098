"""BaseLlmConnection: the interface of a live (bidirectional) connection to a model.

cairn runs no live connections (``Runner.run_live`` raises
``LiveStreamingNotSupportedError``); the interface is here so that model adapters and test
doubles written against ADK's ``BaseLlm.connect`` import and type-check unchanged.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncGenerator
from typing import TypeAlias

from google.genai import types

from cairn.models.llm_response import LlmResponse

RealtimeInput: TypeAlias = types.Blob | types.ActivityStart | types.ActivityEnd
"""What ``send_realtime`` takes: a chunk of media, or the start or end of activity."""


class BaseLlmConnection(abc.ABC):
    """A live session with a model: send history, contents and realtime input; receive
    the model's responses as they come; close it."""

    @abc.abstractmethod
    async def send_history(self, history: list[types.Content]) -> None:
        """Send the conversation so far, to start the live session from it."""

    @abc.abstractmethod
    async def send_content(self, content: types.Content) -> None:
        """Send a user's content (or function responses)."""

    @abc.abstractmethod
    async def send_realtime(self, input: RealtimeInput) -> None:
        """Send a chunk of audio/video, or an activity start or end."""

    @abc.abstractmethod
    def receive(self) -> AsyncGenerator[LlmResponse, None]:
        """The model's responses, as they arrive."""

    @abc.abstractmethod
    async def close(self) -> None:
        """End the live session."""


__all__ = ["BaseLlmConnection", "RealtimeInput"]
