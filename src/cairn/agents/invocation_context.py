"""Everything one invocation (one run_async call) needs, shared by the agents it runs."""

from __future__ import annotations

import dataclasses
import uuid
from typing import TYPE_CHECKING, Any, Protocol

from google.genai import types

from cairn.agents.run_config import RunConfig
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.session import Session

if TYPE_CHECKING:
    from cairn.agents.base_agent import BaseAgent
    from cairn.agents.context import Context


class AgentHooks(Protocol):
    """The plugin hooks agents call around their runs (implemented by ``cairn.plugins``)."""

    async def run_before_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None: ...

    async def run_after_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None: ...


@dataclasses.dataclass
class InvocationFlags:
    """Control flags shared by every agent's view of one invocation."""

    end_invocation: bool = False
    llm_calls: int = 0
    """Model calls made so far in this invocation (bounded by RunConfig.max_llm_calls)."""


def new_invocation_id() -> str:
    """A fresh invocation id, ``e-<uuid4>``."""
    return f"e-{uuid.uuid4()}"


@dataclasses.dataclass
class InvocationContext:
    """The invocation's handle: its id, session, services, current agent and branch.

    ``session`` is the invocation's own copy: every event the Runner appends is
    added to it (with its state delta, ``temp:`` keys included), so later steps
    of the invocation see what earlier ones committed.
    """

    session_service: BaseSessionService
    invocation_id: str
    agent: BaseAgent
    session: Session
    artifact_service: Any = None
    memory_service: Any = None
    credential_service: Any = None
    branch: str | None = None
    user_content: types.Content | None = None
    run_config: RunConfig = dataclasses.field(default_factory=RunConfig)
    plugin_manager: AgentHooks | None = None
    node_path: str = ""
    """The workflow node path this agent runs at (``wf@1/review@2``), '' outside workflows."""
    isolated: bool = False
    """The agent sees only its own branch (an AgentTool's agent), not its ancestors' events."""
    delegation: str | None = None
    """The id of the parent's call this (task or single_turn) agent is serving, if any."""
    flags: InvocationFlags = dataclasses.field(default_factory=InvocationFlags)
    """Shared with the views of the other agents in this invocation."""
    credential_answers: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Answers to credential requests as the user sent them, by interrupt id: the log
    stores them without their secrets (``cairn.auth.without_secrets``); only this
    process, which received them, completes them (shared with the other views)."""
    resumability_config: Any = None
    """The App's ``ResumabilityConfig`` (ADK's field). cairn resumes every invocation from
    its log whatever it says; ``is_resumable`` reports it as ADK does."""
    custom_metadata: dict[str, Any] | None = None
    """Metadata shared by every step of the invocation (``Context.custom_metadata``); starts
    as a copy of ``run_config.custom_metadata``."""

    def __post_init__(self) -> None:
        if self.custom_metadata is None:  # a new invocation, not another agent's view of it
            self.custom_metadata = dict(self.run_config.custom_metadata or {})

    @property
    def is_resumable(self) -> bool:
        """Whether the App asked for resumability (ADK's flag; cairn resumes regardless)."""
        return bool(getattr(self.resumability_config, "is_resumable", False))

    @property
    def end_invocation(self) -> bool:
        """Set to True to stop the whole invocation after the current event."""
        return self.flags.end_invocation

    @end_invocation.setter
    def end_invocation(self, value: bool) -> None:
        self.flags.end_invocation = value

    @property
    def app_name(self) -> str:
        return self.session.app_name

    @property
    def user_id(self) -> str:
        return self.session.user_id

    def for_agent(self, agent: BaseAgent) -> InvocationContext:
        """This context with ``agent`` as the running agent (same session and invocation)."""
        return dataclasses.replace(self, agent=agent)
