"""A read-only view of the running invocation, as instruction providers and toolsets get it."""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from google.genai import types

from cairn.sessions.session import Session

if TYPE_CHECKING:
    from cairn.agents.invocation_context import InvocationContext
    from cairn.agents.run_config import RunConfig


class ReadonlyContext:
    """What an invocation shows without letting the reader change it.

    ``state`` is a read-only mapping over the session's state; writing goes through a
    ``Context`` (a callback's or tool's), whose writes are recorded as a state delta.
    """

    def __init__(self, invocation_context: InvocationContext) -> None:
        self._invocation_context = invocation_context

    @property
    def invocation_context(self) -> InvocationContext:
        return self._invocation_context

    @property
    def user_content(self) -> types.Content | None:
        """The user message that started this invocation."""
        return self._invocation_context.user_content

    @property
    def invocation_id(self) -> str:
        return self._invocation_context.invocation_id

    @property
    def agent_name(self) -> str:
        """The name of the agent running now."""
        return self._invocation_context.agent.name

    @property
    def state(self) -> MappingProxyType[str, Any]:
        """The session's state (every scope), read-only."""
        return MappingProxyType(self._invocation_context.session.state)

    @property
    def session(self) -> Session:
        return self._invocation_context.session

    @property
    def user_id(self) -> str:
        return self._invocation_context.user_id

    @property
    def run_config(self) -> RunConfig:
        return self._invocation_context.run_config
