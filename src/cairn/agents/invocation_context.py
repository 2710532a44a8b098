"""Everything one invocation (one run_async call) needs, shared by the agents it runs."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from google.genai import types

from cairn.agents.run_config import RunConfig
from cairn.events.event import uuid4_text
from cairn.events.interrupts import is_record_event
from cairn.events.invocation_log import InvocationLog
from cairn.models.context_cache_config import ContextCacheConfig
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.session import Session

if TYPE_CHECKING:
    from cairn.agents.base_agent import BaseAgent, BaseAgentState
    from cairn.agents.context import Context
    from cairn.events.event import Event
    from cairn.models.llm_request import LlmRequest
    from cairn.models.llm_response import LlmResponse
    from cairn.tools.base_tool import BaseTool


class AgentHooks(Protocol):
    """The plugin hooks agents call around their runs, model calls and tool calls (implemented
    by ``cairn.plugins.PluginManager``)."""

    @property
    def plugins(self) -> Sequence[object]:
        """The plugins, in order (none: every hook answers None at once)."""
        ...

    async def run_before_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None: ...

    async def run_after_agent_callback(
        self, *, agent: BaseAgent, callback_context: Context
    ) -> types.Content | None: ...

    async def run_on_agent_error_callback(
        self, *, agent: BaseAgent, callback_context: Context, error: Exception
    ) -> None: ...

    async def run_before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None: ...

    async def run_after_model_callback(
        self, *, callback_context: Context, llm_response: LlmResponse
    ) -> LlmResponse | None: ...

    async def run_on_model_error_callback(
        self, *, callback_context: Context, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None: ...

    async def run_before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict[str, Any] | None: ...

    async def run_after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: dict[str, Any],
    ) -> dict[str, Any] | None: ...

    async def run_on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        error: Exception,
    ) -> dict[str, Any] | None: ...

    async def run_on_tool_cancelled_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        error: BaseException,
    ) -> None: ...


@dataclasses.dataclass
class InvocationFlags:
    """Control flags shared by every agent's view of one invocation."""

    end_invocation: bool = False
    llm_calls: int = 0
    """Model calls made so far in this invocation (bounded by RunConfig.max_llm_calls)."""
    transfer_to: str | None = None
    """An agent handed the conversation to an agent outside its own sub-tree (its parent,
    a peer): the agents running return, and the Runner runs that one next (never nested
    inside the agents that were running)."""
    agent_tool_branches: set[str] = dataclasses.field(default_factory=set)
    """Branches on which an ``AgentTool``'s agent runs in this invocation: their events are
    committed to the log but not shown to the invocation's caller (see ``shows_caller``)."""
    log: InvocationLog | None = None
    """The invocation's events indexed by node path (``InvocationContext.invocation_log``)."""

    def shows_caller(self, event: Event) -> bool:
        """Whether the caller of ``run_async`` is given ``event`` (committed either way).

        As in ADK, the caller sees an ``AgentTool``'s call and its answer, not the work of
        the agent inside it (which cairn stores, so that a pause inside can resume) — except
        a pause: a call it waits on is the caller's to answer. Nor does it see the runtime's
        records of its own side effects (``is_record_event``: a ``RemoteA2aAgent``'s
        ``cairn_a2a_send_message``, ``cairn_a2a_await_task`` and their results), which
        google-adk's agents do not yield.
        """
        if is_record_event(event):
            return False
        branch = event.branch
        if branch is None or not self.agent_tool_branches:
            return True
        inside = any(
            branch == tool_branch or branch.startswith(tool_branch + ".")
            for tool_branch in self.agent_tool_branches
        )
        return not inside or bool(event.long_running_tool_ids)


def new_invocation_id() -> str:
    """A fresh invocation id, ``e-<uuid4>``."""
    return f"e-{uuid4_text()}"


new_invocation_context_id = new_invocation_id
"""ADK's name for ``new_invocation_id``."""


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
    node_input: Any = None
    """What the enclosing workflow hands this agent as a node (a nested workflow starts from
    it instead of the user's message); None outside workflows."""
    isolated: bool = False
    """The agent sees only its own branch (an AgentTool's agent), not its ancestors' events."""
    run_start: int | None = None
    """Where in ``session.events`` the running agent's current run begins, set by the shell
    agent (sequential, parallel, loop) that runs it: the agent's resume reads only events
    from there on (a loop's earlier rounds are not this run). None: the invocation's start."""
    resumability_config: Any = None
    """The App's ``ResumabilityConfig``: with ``is_resumable``, agents write ADK's
    ``agent_state``/``end_of_agent`` marker events (cairn resumes from the log either way)."""
    context_cache_config: ContextCacheConfig | None = None
    """The App's ``ContextCacheConfig``: agents' requests then ask their model to cache
    (``cairn.agents.context_caching``)."""
    delegation: str | None = None
    """The id of the parent's call this (task or single_turn) agent is serving, if any."""
    flags: InvocationFlags = dataclasses.field(default_factory=InvocationFlags)
    """Shared with the views of the other agents in this invocation."""
    credential_answers: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Answers to credential requests as the user sent them, by interrupt id: the log
    stores them without their secrets (``cairn.auth.without_secrets``); only this
    process, which received them, completes them (shared with the other views)."""
    custom_metadata: dict[str, Any] | None = None
    """Metadata shared by every step of the invocation (``Context.custom_metadata``); starts
    as a copy of ``run_config.custom_metadata``."""

    agent_states: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    """ADK's in-memory view of the ``agent_state`` markers, by agent name: what each agent
    recorded of its progress in this invocation (shared with the other views). A shell
    agent whose run the log does not show resumes from its entry here."""
    end_of_agents: dict[str, bool] = dataclasses.field(default_factory=dict)
    """The agents that finished in this invocation (their ``end_of_agent`` markers)."""

    def __post_init__(self) -> None:
        if self.custom_metadata is None:  # a new invocation, not another agent's view of it
            self.custom_metadata = dict(self.run_config.custom_metadata or {})

    @property
    def end_invocation(self) -> bool:
        """Set to True to stop the whole invocation after the current event."""
        return self.flags.end_invocation

    @end_invocation.setter
    def end_invocation(self, value: bool) -> None:
        self.flags.end_invocation = value

    @property
    def is_resumable(self) -> bool:
        """The App asked for ADK's resumability markers (``ResumabilityConfig``)."""
        return bool(getattr(self.resumability_config, "is_resumable", False))

    @property
    def app_name(self) -> str:
        return self.session.app_name

    @property
    def user_id(self) -> str:
        return self.session.user_id

    def invocation_log(self) -> InvocationLog:
        """This invocation's events in ``session.events``, indexed by workflow node path; read
        once, then only what was appended since (shared by every view of the invocation)."""
        log = self.flags.log
        if log is None or log.invocation_id != self.invocation_id:
            log = self.flags.log = InvocationLog(self.invocation_id)
        return log.update(self.session.events)

    def for_agent(self, agent: BaseAgent) -> InvocationContext:
        """This context with ``agent`` as the running agent (same session and invocation)."""
        return dataclasses.replace(self, agent=agent)

    def set_agent_state(
        self,
        agent_name: str,
        agent_state: BaseAgentState | None = None,
        end_of_agent: bool = False,
    ) -> None:
        """Record ``agent_name``'s progress, as ADK does: its state (it goes on), that it is
        done (``end_of_agent=True``, its state dropped), or neither (both forgotten)."""
        if end_of_agent:
            self.end_of_agents[agent_name] = True
            self.agent_states.pop(agent_name, None)
        elif agent_state is not None:
            self.agent_states[agent_name] = agent_state.model_dump(mode="json")
            self.end_of_agents[agent_name] = False
        else:
            self.end_of_agents.pop(agent_name, None)
            self.agent_states.pop(agent_name, None)

    def reset_sub_agent_states(self, agent_name: str) -> None:
        """Forget what the agents below ``agent_name`` recorded (a loop's next round)."""
        agent = self.agent.root_agent.find_agent(agent_name)
        if agent is None:
            return
        stack = list(agent.sub_agents)
        while stack:
            child = stack.pop()
            self.agent_states.pop(child.name, None)
            self.end_of_agents.pop(child.name, None)
            stack.extend(child.sub_agents)

    def populate_invocation_agent_states(self) -> None:
        """Fill ``agent_states`` and ``end_of_agents`` from this invocation's markers in the
        session, as ADK does with a resumable App (the Runner does it when an invocation is
        resumed; without resumability there are no markers and nothing is filled). An agent
        that spoke without a marker gets an empty state: it started."""
        if not self.is_resumable:
            return
        for event in self.session.events:
            if event.invocation_id != self.invocation_id:
                continue
            if event.actions.end_of_agent:
                self.end_of_agents[event.author] = True
                self.agent_states.pop(event.author, None)
            elif event.actions.agent_state is not None:
                self.agent_states[event.author] = dict(event.actions.agent_state)
                self.end_of_agents[event.author] = False
            elif event.content is not None and event.author != "user":
                self.agent_states.setdefault(event.author, {})
                self.end_of_agents.setdefault(event.author, False)
