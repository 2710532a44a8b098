"""The base of every agent: identity, the agent tree, agent callbacks, and the run loop hook."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, ClassVar, TypeAlias, TypeVar, cast

from google.genai import types
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

import cairn.telemetry as telemetry
from cairn.agents.base_agent_config import BaseAgentConfig
from cairn.agents.context import Context
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.sub_agent_runs import in_scope, run_start, subtree_names, waiting_since
from cairn.events.event import Event
from cairn.events.event_actions import EventActions
from cairn.sessions.config import GetSessionConfig
from cairn.user_code import call_callback

AgentCallback: TypeAlias = Callable[
    [Context], "types.Content | Awaitable[types.Content | None] | None"
]
"""``callback(callback_context)``: returning Content short-circuits (before) or adds a reply
(after); returning None lets the run proceed."""


async def _call_agent_callbacks(
    callbacks: AgentCallback | list[AgentCallback] | None, ctx: Context
) -> types.Content | None:
    if callbacks is None:
        return None
    for callback in callbacks if isinstance(callbacks, list) else [callbacks]:
        # ADK passes callback_context by keyword; a callback naming it otherwise, by position.
        result: types.Content | None = await call_callback(callback, callback_context=ctx)
        if result is not None:
            return result
    return None


_Agent = TypeVar("_Agent", bound="BaseAgent")
_State = TypeVar("_State", bound="BaseAgentState")


class BaseAgentState(BaseModel):
    """What an agent records about its progress in ADK's ``agent_state`` marker events
    (written with a resumable App; cairn resumes from the log either way)."""

    model_config = ConfigDict(extra="forbid")


class BaseAgent(BaseModel):
    """An agent: a named node that yields Events for an invocation.

    Subclass it and override ``_run_async_impl(ctx)`` (an async generator of
    ``Event``). Events that leave ``invocation_id``, ``author`` or ``branch``
    empty get the invocation's id, the agent's name and the current branch.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: str
    description: str = ""
    sub_agents: list[BaseAgent] = Field(default_factory=list)
    before_agent_callback: AgentCallback | list[AgentCallback] | None = None
    after_agent_callback: AgentCallback | list[AgentCallback] | None = None

    _parent_agent: BaseAgent | None = PrivateAttr(default=None)

    config_type: ClassVar[type[BaseAgentConfig]] = BaseAgentConfig
    """The schema of this class's YAML config (``agent_class: ...``): a custom agent class
    sets a subclass of ``BaseAgentConfig`` declaring the keys it takes."""

    @field_validator("name")
    @classmethod
    def _valid_name(cls, name: str) -> str:
        if not name.isidentifier():
            raise ValueError(
                f"agent name {name!r} must be a Python identifier (letters, digits, "
                "underscores; not starting with a digit), e.g. 'weather_agent'"
            )
        if name == "user":
            raise ValueError(
                "agent name 'user' is reserved for the end user's events; choose another name"
            )
        return name

    def model_post_init(self, context: Any, /) -> None:
        seen: set[str] = set()
        for child in self.sub_agents:
            if child.name in seen:
                raise ValueError(
                    f"agent {self.name!r} has two sub-agents named {child.name!r}; "
                    "sub-agent names must be unique"
                )
            seen.add(child.name)
            if child._parent_agent is not None and child._parent_agent is not self:
                raise ValueError(
                    f"agent {child.name!r} is already a sub-agent of "
                    f"{child._parent_agent.name!r}; an agent can have one parent only — "
                    "create a separate instance to use it under "
                    f"{self.name!r}"
                )
            child._parent_agent = self

    # -- the tree -----------------------------------------------------------------------
    @property
    def parent_agent(self) -> BaseAgent | None:
        """The agent this one is a sub-agent of: set when that agent is constructed with it
        in ``sub_agents`` (a second parent is refused). Settable, as in ADK, e.g. to None to
        detach it before giving it to another parent."""
        return _parent_of(self)

    @parent_agent.setter
    def parent_agent(self, parent: BaseAgent | None) -> None:
        self._parent_agent = parent

    @classmethod
    def from_config(cls: type[_Agent], config: Any, config_abs_path: str) -> _Agent:
        """This class built from its YAML config (ADK's hook): ``config`` is a validated
        ``config_type`` model (or its data); ``config_abs_path`` is the file it came from,
        against which ``config_path`` references resolve. Override it to build the agent
        yourself; ``cairn.agents.config_agent_utils.from_config`` then calls the override.
        """
        from cairn.agents.config_agent_utils import build_from_config_model

        agent = build_from_config_model(cls, config, config_abs_path)
        assert isinstance(agent, cls)
        return agent

    def clone(self: _Agent, update: Mapping[str, Any] | None = None) -> _Agent:
        """A copy of this agent with the fields in ``update`` replaced, e.g.
        ``agent.clone(update={"name": "reviewer_2"})``.

        As in ADK: sub-agents are cloned too (unless ``update`` gives ``sub_agents``, which
        are then re-parented to the copy), list fields are copied rather than shared, a
        callback that is a method of this agent is bound to the copy, and the copy has no
        parent. ``parent_agent`` and names that are not fields are refused (``ValueError``).
        """
        changes = dict(update or {})
        if "parent_agent" in changes:
            raise ValueError(
                "Cannot update `parent_agent` field in clone: an agent gets its parent when "
                "that parent "
                "is constructed with it in sub_agents=[...]"
            )
        unknown = sorted(set(changes) - set(type(self).model_fields))
        if unknown:
            raise ValueError(
                f"Cannot update nonexistent fields in {type(self).__name__}.clone(): "
                f"{unknown}; "
                f"its fields are {sorted(type(self).model_fields)}"
            )
        copy = self.model_copy(update=changes)
        for attribute, private in type(self).__private_attributes__.items():
            fresh = cast("Callable[[], Any] | None", private.default_factory)  # not shared
            setattr(copy, attribute, fresh() if fresh is not None else private.get_default())

        def rebind(value: Any) -> Any:
            if inspect.ismethod(value) and value.__self__ is self:
                return value.__func__.__get__(copy)
            return value

        for field in type(self).model_fields:
            if field == "sub_agents" or field in changes:
                continue
            value = getattr(copy, field)
            if isinstance(value, list):
                setattr(copy, field, [rebind(item) for item in value])
            elif inspect.ismethod(value):
                setattr(copy, field, rebind(value))
        if "sub_agents" not in changes:
            copy.sub_agents = [child.clone() for child in self.sub_agents]
        for child in copy.sub_agents:
            child._parent_agent = copy
        copy._parent_agent = None
        return copy

    @property
    def root_agent(self) -> BaseAgent:
        agent = self
        while (parent := _parent_of(agent)) is not None:
            agent = parent
        return agent

    def find_agent(self, name: str) -> BaseAgent | None:
        """This agent or a descendant called ``name``."""
        if self.name == name:
            return self
        return self.find_sub_agent(name)

    def find_sub_agent(self, name: str) -> BaseAgent | None:
        """A descendant called ``name``."""
        for child in self.sub_agents:
            found = child.find_agent(name)
            if found is not None:
                return found
        return None

    # -- running ----------------------------------------------------------------------------
    def history_window(self) -> GetSessionConfig | None:
        """Which stored events the Runner loads into ``ctx.session.events`` for this root agent.

        ``None`` (the default) loads the whole history, as ADK does. An agent that
        reads only recent events (or none) should return e.g.
        ``GetSessionConfig(num_recent_events=20)``: the store then reads just that
        window, and starting an invocation costs the same at event 100 and at
        event 100,000. State is always complete, whatever the window.
        """
        return None

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """Override: yield the events of this agent's turn."""
        raise NotImplementedError(
            f"agent {self.name!r} ({type(self).__name__}) does not implement "
            "_run_async_impl(ctx); override it as an async generator that yields Events"
        )
        yield  # pragma: no cover - makes this an async generator

    async def _run_live_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """Override for a live (bidirectional) run: yield its events. As in ADK, an agent
        that does not override it cannot run live (``NotImplementedError``). cairn's
        ``LlmAgent`` has no live run (``LiveStreamingNotSupportedError``)."""
        raise NotImplementedError(
            f"agent {self.name!r} ({type(self).__name__}) does not implement "
            "_run_live_impl(ctx), so it cannot run live; run it with run_async"
        )
        yield  # pragma: no cover - makes this an async generator

    async def run_async(self, parent_context: InvocationContext) -> AsyncGenerator[Event, None]:
        """Run this agent, in an ``invoke_agent`` span: before callbacks, ``_run_async_impl``,
        after callbacks."""
        ctx = parent_context.for_agent(self)
        with telemetry.agent_span(ctx, self.name) as span:
            async with telemetry.in_span(span, self._run_with_callbacks(ctx, live=False)) as events:
                async for event in events:
                    yield event

    async def run_live(self, parent_context: InvocationContext) -> AsyncGenerator[Event, None]:
        """ADK's live entry point: as ``run_async`` (span, before and after callbacks) around
        ``_run_live_impl``. Only agents that implement ``_run_live_impl`` run live."""
        ctx = parent_context.for_agent(self)
        with telemetry.agent_span(ctx, self.name) as span:
            async with telemetry.in_span(span, self._run_with_callbacks(ctx, live=True)) as events:
                async for event in events:
                    yield event

    async def _run_with_callbacks(
        self, ctx: InvocationContext, *, live: bool
    ) -> AsyncGenerator[Event, None]:
        # A resumed run goes on where it stopped: its before callbacks ran already (what they
        # wrote is in the log), and its after callbacks wait until it has finished.
        start = run_start(ctx)
        if not self._started(ctx, start):
            before = await self._callback_event(ctx, before=True)
            if before is not None:
                yield before
                if before.content is not None:
                    return
        if ctx.end_invocation:
            return
        impl = self._run_live_impl(ctx) if live else self._run_async_impl(ctx)
        try:
            async with contextlib.aclosing(impl) as produced:
                async for event in produced:
                    yield self._fill_defaults(ctx, event)
                    if ctx.end_invocation:
                        return
        except Exception as error:
            if ctx.plugin_manager is not None:  # plugins hear of it; the error goes on up
                await ctx.plugin_manager.run_on_agent_error_callback(
                    agent=self, callback_context=Context(ctx), error=error
                )
            raise
        if waiting_since(ctx.session.events, start, ctx.invocation_id, ctx.branch):
            return  # paused: it has not finished yet
        after = await self._callback_event(ctx, before=False)
        if after is not None:
            yield after

    def _started(self, ctx: InvocationContext, start: int) -> bool:
        """Whether this run of the agent (in this invocation, on its branch and node path,
        from ``start``) has events already: it is being resumed."""
        names = subtree_names(self)
        path = ctx.node_path
        for event in ctx.session.events[start:]:
            if event.invocation_id != ctx.invocation_id or event.author not in names:
                continue
            if not in_scope(event, ctx.branch):
                continue
            at = event.node_info.path or ""
            if path and at != path and not at.startswith(path + "/"):
                continue
            return True
        return False

    def _load_agent_state(self, ctx: InvocationContext, state_type: type[_State]) -> _State | None:
        """This agent's state in ``ctx.agent_states`` (ADK's in-memory view of the
        ``agent_state`` markers) as ``state_type``; None when it has none."""
        saved = ctx.agent_states.get(self.name)
        return None if saved is None else state_type.model_validate(saved)

    def _create_agent_state_event(self, ctx: InvocationContext) -> Event:
        """ADK's content-less marker event carrying what ``ctx`` holds for this agent: its
        state, or that it is done (``end_of_agent``)."""
        ended = ctx.end_of_agents.get(self.name, False)
        return Event(
            invocation_id=ctx.invocation_id,
            author=self.name,
            branch=ctx.branch,
            actions=EventActions(
                agent_state=None if ended else ctx.agent_states.get(self.name),
                end_of_agent=True if ended else None,
            ),
        )

    def _fill_defaults(self, ctx: InvocationContext, event: Event) -> Event:
        if not event.invocation_id:
            event.invocation_id = ctx.invocation_id
        if not event.author:
            event.author = self.name
        if event.branch is None and ctx.branch is not None:
            event.branch = ctx.branch
        return event

    async def _callback_event(self, ctx: InvocationContext, *, before: bool) -> Event | None:
        """Run plugin then agent callbacks; an event if they replied or changed state."""
        hooks = ctx.plugin_manager
        own = self.before_agent_callback if before else self.after_agent_callback
        if not own and (hooks is None or not hooks.plugins):
            return None  # no callback and no plugin: none to reply or change state
        callback_context = Context(ctx)
        content: types.Content | None = None
        if hooks is not None:
            if before:
                content = await hooks.run_before_agent_callback(
                    agent=self, callback_context=callback_context
                )
            else:
                content = await hooks.run_after_agent_callback(
                    agent=self, callback_context=callback_context
                )
        if content is None:
            content = await _call_agent_callbacks(own, callback_context)
        actions = callback_context.actions
        if content is None and not actions.state_delta and not actions.artifact_delta:
            return None
        return self._fill_defaults(ctx, Event(content=content, actions=actions))


def _parent_of(agent: BaseAgent) -> BaseAgent | None:
    """``agent._parent_agent``, read from the model's private values directly: reading a
    private attribute goes through pydantic's ``__getattr__``, which costs more than the
    walks up the tree that ask for it on every model call. Anything unusual there (a private
    value deleted) is left to that path, and its error."""
    private = agent.__pydantic_private__
    if private is not None and "_parent_agent" in private:
        parent: BaseAgent | None = private["_parent_agent"]
        return parent
    return agent._parent_agent
