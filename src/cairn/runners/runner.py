"""The Runner: drives an agent for one invocation and commits every event before yielding it."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import queue
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Any

from google.genai import types

import cairn.telemetry as telemetry
from cairn.agents.base_agent import BaseAgent
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.invocation_context import new_invocation_id as _fresh_invocation_id
from cairn.agents.live_request_queue import LiveRequestQueue
from cairn.agents.llm_agent import LlmAgent
from cairn.agents.routing import find_agent_to_run
from cairn.agents.run_config import MultitaskStrategy, RunConfig
from cairn.agents.sub_agent_runs import marker, unfinished_hand_overs, waiting_since
from cairn.apps.app import App
from cairn.apps.llm_event_summarizer import LlmEventSummarizer
from cairn.artifacts.in_memory_artifact_service import InMemoryArtifactService
from cairn.errors import (
    InvocationInterruptedError,
    InvocationNotFoundError,
    LiveStreamingNotSupportedError,
    SessionNotFoundError,
)
from cairn.events.event import Event
from cairn.events.event_actions import EventActions
from cairn.events.interrupts import (
    Interrupt,
    interrupted_calls,
    pending_interrupts,
    starts_invocation,
)
from cairn.events.rewind import live_events
from cairn.memory import InMemoryMemoryService
from cairn.plugins.base_plugin import BasePlugin
from cairn.plugins.plugin_manager import PluginManager
from cairn.runners._answers import check_answers, responses_in, with_matched_ids
from cairn.runners._compaction import compact
from cairn.runners._history_cache import HistoryCache
from cairn.runners._rewind import rewind_event
from cairn.runners.outcome import InvocationOutcome
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.config import GetSessionConfig
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.lease import (
    HeldLease,
    SessionLease,
    bind_lease,
    hold_session,
    holder_name,
    lease_holder,
)
from cairn.sessions.session import Session
from cairn.tools.base_tool import BaseToolset

logger = logging.getLogger(__name__)

CLOSE_WAIT = 10.0
"""Seconds ``Runner.close`` gives cancelled invocations to end (release their leases)."""

SESSION_BUSY_TIMEOUT = 300.0
"""Seconds an invocation waits, by default, for a busy session before ``SessionBusyError``."""


def _with_run_metadata(event: Event, run_config: RunConfig) -> Event:
    """``event`` with ``run_config.custom_metadata`` under its own ``custom_metadata`` (the
    event's keys win), as ADK stamps every event of the invocation."""
    if run_config.custom_metadata:
        event.custom_metadata = {**run_config.custom_metadata, **(event.custom_metadata or {})}
    return event


class Runner:
    """Runs an app's root agent against a session store.

    Every non-partial event is appended to the session before the caller sees
    it; if the append fails, the caller gets the error and never that event.
    Partial events are passed through and never stored.

    At most one invocation runs per session at a time, across every process
    sharing the store: the invocation holds a lease on the session (renewed in
    the background, expiring ``session_lease_ttl`` seconds after its holder
    dies). What a second one does is its ``multitask_strategy`` (the Runner's,
    or ``RunConfig.multitask_strategy``): ``ENQUEUE`` waits in line, in arrival
    order, up to ``session_busy_timeout`` seconds (or
    ``RunConfig.session_busy_timeout``), then gets ``SessionBusyError``;
    ``REJECT`` gets it at once; ``INTERRUPT`` stops the running one and runs;
    ``ROLLBACK`` also rewinds the stopped one away first.
    """

    def __init__(
        self,
        *,
        app: App | None = None,
        app_name: str | None = None,
        agent: BaseAgent | None = None,
        node: BaseAgent | None = None,
        plugins: list[BasePlugin] | None = None,
        artifact_service: Any = None,
        session_service: BaseSessionService,
        memory_service: Any = None,
        credential_service: Any = None,
        plugin_close_timeout: float = 5.0,
        auto_create_session: bool = False,
        session_busy_timeout: float = SESSION_BUSY_TIMEOUT,
        session_lease_ttl: float = 30.0,
        multitask_strategy: MultitaskStrategy = MultitaskStrategy.ENQUEUE,
    ) -> None:
        given = [k for k, v in (("app", app), ("agent", agent), ("node", node)) if v is not None]
        if len(given) != 1:
            raise ValueError(
                "Runner needs exactly one of app=App(...), agent=... (with app_name=...) or "
                f"node=Workflow(...); got {', '.join(given) or 'none'}"
            )
        if node is not None:
            if not isinstance(node, BaseAgent):
                raise TypeError(
                    f"Runner(node=...) runs a Workflow (or an agent); got "
                    f"{type(node).__name__}. Wrap a single node in a workflow: "
                    "Workflow(name=..., edges=[(START, your_node)])"
                )
            agent, app_name = node, app_name or node.name
        if app is not None:
            if app_name is not None and app_name != app.name:
                raise ValueError(
                    f"app_name {app_name!r} differs from app.name {app.name!r}; "
                    "omit app_name when passing app="
                )
            self.app_name = app.name
            self.agent = app.root_agent
            all_plugins = [*app.plugins, *(plugins or [])]
        else:
            if not app_name:
                raise ValueError("Runner(agent=...) also needs app_name=...")
            assert agent is not None
            self.app_name = app_name
            self.agent = agent
            all_plugins = list(plugins or [])
        self.app = app
        self.session_service = session_service
        self.artifact_service = artifact_service
        self.memory_service = memory_service
        self.credential_service = credential_service
        self.plugin_manager = PluginManager(all_plugins, close_timeout=plugin_close_timeout)
        self.plugin_close_timeout = plugin_close_timeout
        self.auto_create_session = auto_create_session
        self.session_busy_timeout = session_busy_timeout
        self.session_lease_ttl = session_lease_ttl
        self.multitask_strategy = MultitaskStrategy(multitask_strategy)
        self._history = HistoryCache()
        self._running: set[asyncio.Task[Any]] = set()

    # -- lifecycle -----------------------------------------------------------------------
    async def close(self) -> None:
        """Close the plugins, the agents' toolsets (MCP connections and the like) and
        instruction providers that have an async ``close()``.

        Invocations still running (a server shutting down) are cancelled first and given
        ``CLOSE_WAIT`` seconds to end as a cancelled invocation does: what was committed
        stays, the session's lease is released.
        """
        running = [task for task in self._running if task is not asyncio.current_task()]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=CLOSE_WAIT)
        try:
            await self.plugin_manager.close()
        finally:
            await self._close_agents()

    async def _close_agents(self) -> None:
        """Close the agents' toolsets and instruction providers that hold connections, and
        the agents that hold their own (a ``RemoteA2aAgent``'s HTTP client), agents of
        ``AgentTool``s included."""
        pending = [self.agent]
        while pending:
            agent = pending.pop()
            pending.extend(agent.sub_agents)
            closing = getattr(agent, "close", None)
            if inspect.iscoroutinefunction(closing):
                await closing()
            for tool in getattr(agent, "tools", []):
                if isinstance(tool, BaseToolset):
                    await tool.close()
                elif isinstance(getattr(tool, "agent", None), BaseAgent):
                    pending.append(tool.agent)
            for provider in (
                getattr(agent, "instruction", None),
                getattr(agent, "global_instruction", None),
            ):  # an instruction provider holding a connection (McpInstructionProvider)
                close = None if isinstance(provider, str) else getattr(provider, "close", None)
                if inspect.iscoroutinefunction(close):
                    await close()

    async def __aenter__(self) -> Runner:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- running -----------------------------------------------------------------------------
    async def _load_session(
        self,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
        *,
        complete: bool = True,
    ) -> Session:
        """The session with its live events: those ``config`` selects, else the whole history
        (with compaction on and ``complete=False``: from the newest summary onward)."""
        if config is None:
            compacting = self.app is not None and self.app.events_compaction_config is not None
            session = await self._history.load(
                self.session_service,
                self.app_name,
                user_id,
                session_id,
                complete=complete,
                since_compaction=compacting,
            )
        else:
            session = await self.session_service.get_session(
                app_name=self.app_name, user_id=user_id, session_id=session_id, config=config
            )
            if session is not None:
                session.events = live_events(session.events)
        if session is not None:
            return session
        if not self.auto_create_session:
            raise SessionNotFoundError(
                app_name=self.app_name, user_id=user_id, session_id=session_id
            )
        return await self.session_service.create_session(
            app_name=self.app_name, user_id=user_id, session_id=session_id
        )

    async def run_async(
        self,
        *,
        user_id: str,
        session_id: str,
        invocation_id: str | None = None,
        new_message: types.Content | None = None,
        state_delta: dict[str, Any] | None = None,
        run_config: RunConfig | None = None,
        yield_user_message: bool = False,
        new_invocation_id: str | None = None,
        outcome: InvocationOutcome | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run one invocation and yield its events, each already committed (unless partial).

        ``new_message`` is stored first as a ``user`` event (with ``state_delta``
        in its actions). ``invocation_id`` continues an invocation already in
        the session; the agent runs again under that id. ``new_invocation_id``
        (cairn's) names a new invocation instead of a fresh random id: a run
        (``cairn.runs``) is known by its id before it starts. ``outcome`` (cairn's) is
        told, once the invocation has ended, which of its interrupts wait for an answer.
        """
        if new_message is None and invocation_id is None:
            raise ValueError(
                "run_async needs new_message=Content(...) to start an invocation, or "
                "invocation_id=... to continue one"
            )
        if invocation_id is not None and new_invocation_id is not None:
            raise ValueError(
                "pass invocation_id=... to continue an invocation or new_invocation_id=... to "
                "name a new one, not both"
            )
        continuing = invocation_id is not None
        invocation_id = invocation_id or new_invocation_id or _fresh_invocation_id()
        with telemetry.invocation_span(
            app_name=self.app_name,
            user_id=user_id,
            session_id=session_id,
            invocation_id=invocation_id,
        ) as span:
            invocation = self._run_invocation(
                user_id=user_id,
                session_id=session_id,
                invocation_id=invocation_id,
                continuing=continuing,
                new_message=new_message,
                state_delta=state_delta,
                run_config=run_config or RunConfig(),
                yield_user_message=yield_user_message,
                outcome=outcome,
            )
            async with telemetry.in_span(span, invocation) as events:
                async for event in events:
                    yield event

    def run_live(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        live_request_queue: LiveRequestQueue | None = None,
        run_config: RunConfig | None = None,
        session: Session | None = None,
    ) -> AsyncGenerator[Event, None]:
        """ADK's live (bidirectional audio/video) run: cairn has none, so this raises
        ``LiveStreamingNotSupportedError`` at once, naming what to use instead
        (``run_async``, with ``StreamingMode.SSE`` for partial events)."""
        where = session.id if session is not None else session_id
        raise LiveStreamingNotSupportedError(
            what=f"Runner.run_live was called (app {self.app_name!r}, session {where!r})"
        )

    @contextlib.asynccontextmanager
    async def _hold(
        self, user_id: str, session_id: str, invocation_id: str, run_config: RunConfig
    ) -> AsyncIterator[HeldLease]:
        """The session's lease for one invocation, got as ``run_config`` or the Runner says
        (its multitask strategy and busy timeout); the invocation's task is known to
        ``close`` meanwhile."""
        strategy = run_config.multitask_strategy or self.multitask_strategy
        busy_timeout = run_config.session_busy_timeout
        wait = self.session_busy_timeout if busy_timeout is None else busy_timeout
        task = asyncio.current_task()
        if task is not None:
            self._running.add(task)
        try:
            async with hold_session(
                self.session_service,
                app_name=self.app_name,
                user_id=user_id,
                session_id=session_id,
                holder=lease_holder(invocation_id),
                wait=0.0 if strategy is MultitaskStrategy.REJECT else wait,
                ttl=self.session_lease_ttl,
                take_over=strategy in (MultitaskStrategy.INTERRUPT, MultitaskStrategy.ROLLBACK),
            ) as lease:
                if strategy is MultitaskStrategy.ROLLBACK and lease.interrupted:
                    await self._roll_back(lease, holder_name(lease.interrupted))
                yield lease
        finally:
            self._running.discard(task)

    async def _close_stopped_calls(self, session: Session, stopped: list[Interrupt]) -> None:
        """Record a result for each tool call a stopped invocation was in (an error saying
        so), for an invocation that interrupts it: the next invocation starts from a
        conversation whose every call has an answer, as models require, instead of refusing
        to start (``InvocationInterruptedError``). Whoever stopped it (this call's strategy,
        a cancelled run), the answer is the same."""
        last = session.events[-1]
        calls = {call.id: call for call in last.get_function_calls() if call.id}
        answered = [calls[i.id] for i in stopped if i.id in calls]
        result = {
            "error": f"interrupted: invocation {last.invocation_id!r} was stopped during this "
            "call (another invocation took the session over), so it returned nothing; "
            "whether it took effect is unknown"
        }
        event = Event(
            invocation_id=last.invocation_id,
            author=last.author,
            branch=last.branch,
            node_info=last.node_info,
            content=types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call.id, name=call.name, response=result
                        )
                    )
                    for call in answered
                ],
            ),
        )
        await self._append(session, event)

    async def _roll_back(self, lease: SessionLease, interrupted: str) -> None:
        """Rewind the invocation this one interrupted away, under this one's lease (nothing
        to do if it committed nothing, or was rewound already)."""
        try:
            await self._rewind_under(lease, interrupted, _fresh_invocation_id())
        except InvocationNotFoundError:
            logger.info(
                "rollback: invocation %r left nothing in session %r to rewind",
                interrupted,
                lease.session_id,
            )

    async def _run_invocation(
        self,
        *,
        user_id: str,
        session_id: str,
        invocation_id: str,
        continuing: bool,
        new_message: types.Content | None,
        state_delta: dict[str, Any] | None,
        run_config: RunConfig,
        yield_user_message: bool,
        outcome: InvocationOutcome | None = None,
    ) -> AsyncGenerator[Event, None]:
        """The invocation: lease the session, load it, store the user's message, run the agent."""
        async with self._hold(user_id, session_id, invocation_id, run_config) as lease:
            # Loaded under the lease, so no other invocation commits meanwhile; every append
            # through this session is refused once another holder took the lease over.
            # A continued invocation needs its earlier events; a new one, what the agent reads.
            responses = responses_in(new_message)
            resuming = continuing or bool(responses)
            window = None if resuming else self.agent.history_window()
            session = await self._load_session(user_id, session_id, window, complete=resuming)
            bind_lease(session, lease)
            answers = None
            credential_answers: dict[str, Any] = {}
            if responses:
                # Answers to calls of an earlier invocation resume that invocation; an answer
                # to nothing pending is refused before anything is stored.
                assert new_message is not None
                new_message = with_matched_ids(session.events, new_message)
                responses = responses_in(new_message)
                answers = check_answers(
                    session.events,
                    responses,
                    app_name=self.app_name,
                    user_id=user_id,
                    session_id=session_id,
                )
                if continuing and answers.invocation_id != invocation_id:
                    raise ValueError(
                        f"the message answers interrupts of invocation "
                        f"{answers.invocation_id!r}, not of invocation_id={invocation_id!r}; "
                        "drop invocation_id (the answers name their invocation) or fix it"
                    )
                invocation_id, continuing = answers.invocation_id, True
                if new_message is not None:
                    new_message, credential_answers = answers.stored_apart(
                        answers.named(new_message)
                    )
            if not continuing and session.events:
                stopped = interrupted_calls(session.events[-1], set())
                strategy = run_config.multitask_strategy or self.multitask_strategy
                if stopped and strategy is MultitaskStrategy.INTERRUPT:
                    await self._close_stopped_calls(session, stopped)
                elif stopped:
                    raise InvocationInterruptedError(
                        app_name=self.app_name,
                        user_id=user_id,
                        session_id=session_id,
                        invocation_id=session.events[-1].invocation_id,
                        calls=[f"{i.name}({i.id})" for i in stopped],
                    )
            if continuing and not any(
                e.invocation_id == invocation_id for e in reversed(session.events)
            ):
                raise InvocationNotFoundError(
                    app_name=self.app_name,
                    user_id=user_id,
                    session_id=session_id,
                    invocation_id=invocation_id,
                )
            ctx = InvocationContext(
                session_service=self.session_service,
                invocation_id=invocation_id,
                agent=self.agent,
                session=session,
                artifact_service=self.artifact_service,
                memory_service=self.memory_service,
                credential_service=self.credential_service,
                run_config=run_config,
                plugin_manager=self.plugin_manager,
                credential_answers=credential_answers,
                resumability_config=self.app.resumability_config if self.app else None,
                context_cache_config=self.app.context_cache_config if self.app else None,
            )
            if continuing:  # ADK's in-memory view of the invocation's markers
                ctx.populate_invocation_agent_states()
            user_event = await self._user_event(ctx, new_message, state_delta)
            if user_event is not None and answers is not None:
                # An answer belongs to the branch of the calls it answers (a sub-agent's).
                user_event.branch = answers.branch
            if continuing:  # the invocation's own request stays its input
                ctx.user_content = _first_request(session.events, invocation_id)
            if user_event is not None:
                await self._append(session, user_event)
                if yield_user_message:
                    yield user_event
            ctx.agent, ctx.branch = self._agent_to_run(session)
            # aclosing: if the caller stops early, the agent's cleanup runs before the lease
            # is released, not whenever the garbage collector gets to it.
            async with contextlib.aclosing(self._drive(ctx)) as driven:
                async for event in driven:
                    yield event
            if window is None:  # history from the newest summary on is loaded: compact if due
                await self._maybe_compact(ctx)
            if outcome is not None:
                # The session holds all of the invocation's events: a continued one was
                # loaded whole, and each event of this run was appended through it.
                outcome.ended([e for e in session.events if e.invocation_id == invocation_id])

    async def _maybe_compact(self, ctx: InvocationContext) -> None:
        """Append a summary of old history when the app's compaction config says so.

        The summary event is stored (not yielded): prompts then show it instead of
        the events it covers, which stay in the log.
        """
        config = self.app.events_compaction_config if self.app is not None else None
        if config is None:
            return
        summarizer = config.summarizer
        if summarizer is None:
            if not isinstance(self.agent, LlmAgent):
                raise ValueError(
                    "EventsCompactionConfig needs summarizer=LlmEventSummarizer(llm=...) "
                    "when the root agent is not an LlmAgent"
                )
            summarizer = LlmEventSummarizer(self.agent.canonical_model)
        event = await compact(config, summarizer, ctx.session.events)
        if event is not None:
            await self._append(ctx.session, event)

    async def rewind_async(
        self,
        *,
        user_id: str,
        session_id: str,
        rewind_before_invocation_id: str,
        run_config: RunConfig | None = None,
    ) -> Event:
        """Take the session back to just before an invocation; return the rewind event.

        One event is appended (author ``user``, ``actions.rewind_before_invocation_id``):
        it sets session-scope state back to what it was before the invocation
        (keys created since are removed; the initial state is kept) and records
        the restored session artifacts. ``app:``/``user:`` state and ``user:``
        artifacts are shared with other sessions and stay as they are. The
        rewound events stay in the log; prompts, pending interrupts and resumes
        no longer see them. Waits for (or, like ``run_async``, refuses with
        ``SessionBusyError``) a running invocation; raises
        ``InvocationNotFoundError`` for an invocation the session does not have
        or that was rewound already. Safe to retry after a crash.
        """
        invocation_id = _fresh_invocation_id()
        async with self._hold(
            user_id, session_id, invocation_id, run_config or RunConfig()
        ) as lease:
            return await self._rewind_under(lease, rewind_before_invocation_id, invocation_id)

    async def _rewind_under(
        self, lease: SessionLease, rewind_before_invocation_id: str, invocation_id: str
    ) -> Event:
        """Append the event (of invocation ``invocation_id``) rewinding the session to just
        before an invocation, under ``lease``."""
        user_id, session_id = lease.user_id, lease.session_id
        session = await self._history.load(
            self.session_service, self.app_name, user_id, session_id, log=True
        )
        initial = await self.session_service.get_initial_state(
            app_name=self.app_name, user_id=user_id, session_id=session_id
        )
        if session is None or initial is None:
            raise SessionNotFoundError(
                app_name=self.app_name, user_id=user_id, session_id=session_id
            )
        bind_lease(session, lease)
        event = await rewind_event(
            session,
            initial_state=initial,
            rewind_before_invocation_id=rewind_before_invocation_id,
            invocation_id=invocation_id,
            artifact_service=self.artifact_service,
        )
        return await self._append(session, event)

    async def edit_message_async(
        self,
        *,
        user_id: str,
        session_id: str,
        invocation_id: str,
        new_message: types.Content,
        state_delta: dict[str, Any] | None = None,
        run_config: RunConfig | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Replace the user message of an earlier turn and run again from there.

        The session is rewound to just before ``invocation_id`` (see
        ``rewind_async``: its events and every later one stop counting), then
        ``new_message`` runs as a new invocation, whose events are yielded.
        Raises ``ValueError`` when that invocation has no user message still in
        effect (an unknown, rewound or agent-only invocation).
        """
        session = await self.session_service.get_session(
            app_name=self.app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise SessionNotFoundError(
                app_name=self.app_name, user_id=user_id, session_id=session_id
            )
        if not any(
            event.invocation_id == invocation_id
            and event.author == "user"
            and event.content is not None
            for event in live_events(session.events)
        ):
            raise ValueError(
                f"No user message found for invocation {invocation_id!r} in session "
                f"{session_id!r}: pass the invocation_id of a user turn still in effect "
                "(e.g. a user event's invocation_id from get_session(...).events)."
            )
        await self.rewind_async(
            user_id=user_id,
            session_id=session_id,
            rewind_before_invocation_id=invocation_id,
            run_config=run_config,
        )
        async with contextlib.aclosing(
            self.run_async(
                user_id=user_id,
                session_id=session_id,
                new_message=new_message,
                state_delta=state_delta,
                run_config=run_config,
            )
        ) as events:
            async for event in events:
                yield event

    async def list_pending_interrupts(self, *, user_id: str, session_id: str) -> list[Interrupt]:
        """The session's interrupts that wait for an answer, oldest first.

        Each names its kind (``input``, ``confirmation``, ``credential``,
        ``in_doubt``, ``long_running``), the id and function name to answer
        with, the invocation it belongs to, and what it asks (message or hint,
        payload, response schema, the call it is about).
        """
        session = await self._history.load(self.session_service, self.app_name, user_id, session_id)
        if session is None:
            raise SessionNotFoundError(
                app_name=self.app_name, user_id=user_id, session_id=session_id
            )
        return pending_interrupts(session.events)

    def _agent_to_run(self, session: Session) -> tuple[BaseAgent, str | None]:
        """The root agent; for a root LlmAgent (chat mode), the agent that holds the chat."""
        if not isinstance(self.agent, LlmAgent):
            return self.agent, None
        if self.agent.mode not in (None, "chat"):
            return self.agent, None  # as in ADK, a task or single_turn root simply runs
        return find_agent_to_run(session.events, self.agent)

    async def _user_event(
        self,
        ctx: InvocationContext,
        new_message: types.Content | None,
        state_delta: dict[str, Any] | None,
    ) -> Event | None:
        if new_message is not None:
            new_message = new_message.model_copy(update={"role": "user"})
            replaced = await self.plugin_manager.run_on_user_message_callback(
                invocation_context=ctx, user_message=new_message
            )
            new_message = replaced if replaced is not None else new_message
            ctx.user_content = new_message
        if new_message is None and not state_delta:
            return None
        return _with_run_metadata(
            Event(
                invocation_id=ctx.invocation_id,
                author="user",
                content=new_message,
                actions=EventActions(state_delta=dict(state_delta or {})),
            ),
            ctx.run_config,
        )

    async def _drive(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """The invocation between the plugins' run hooks: ``on_run_error_callback`` hears of
        an exception that escapes it; ``after_run_callback`` runs when it ends otherwise (it
        finished, paused, or the caller stopped reading), as in ADK."""
        error: BaseException | None = None
        closing = False
        try:
            async with contextlib.aclosing(self._drive_agents(ctx)) as driven:
                async for event in driven:
                    yield event
        except GeneratorExit:
            closing = True  # the caller stopped reading: a clean end
            raise
        except Exception as failure:
            error = failure
            await self.plugin_manager.run_on_run_error_callback(invocation_context=ctx, error=error)
            raise
        except BaseException as interrupted:  # cancelled
            error = interrupted
            raise
        finally:
            if error is None:
                try:
                    await self.plugin_manager.run_after_run_callback(invocation_context=ctx)
                except Exception as failure:
                    await self.plugin_manager.run_on_run_error_callback(
                        invocation_context=ctx, error=failure
                    )
                    if not closing:
                        raise
                    logger.exception(
                        "after_run_callback failed as invocation %r closed early",
                        ctx.invocation_id,
                    )

    async def _drive_agents(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """Run the root agent, committing each event before handing it on."""
        early_reply = await self.plugin_manager.run_before_run_callback(invocation_context=ctx)
        if early_reply is not None:
            event = Event(invocation_id=ctx.invocation_id, author="model", content=early_reply)
            yield await self._commit(ctx, event)
            return
        resumed = ctx.agent is not self.agent
        while True:
            agent_events = ctx.agent.run_async(ctx)
            try:
                async for event in agent_events:
                    committed = await self._commit(ctx, event)
                    if ctx.flags.shows_caller(committed):
                        yield committed
            finally:
                await agent_events.aclose()
            if resumed and ctx.is_resumable and not ctx.flags.transfer_to:
                # A sub-agent resumed on its own finished: the agents that handed over to
                # it (and run it nested) are done too; their end markers come now, as in ADK.
                resumed = False
                if not ctx.end_invocation and not waiting_since(
                    ctx.session.events, 0, ctx.invocation_id, None
                ):
                    for ancestor in unfinished_hand_overs(ctx, ctx.agent):
                        yield await self._commit(ctx, marker(ctx, ancestor, end=True))
            # A hand-over outside the running agent's sub-tree (to its parent or a peer):
            # the agents that were running have returned; the target runs here, not nested.
            target_name, ctx.flags.transfer_to = ctx.flags.transfer_to, None
            target = self.agent.find_agent(target_name) if target_name else None
            if target is None or ctx.end_invocation:
                return
            ctx.agent = target

    async def _commit(self, ctx: InvocationContext, event: Event) -> Event:
        event = _with_run_metadata(event, ctx.run_config)
        replaced = await self.plugin_manager.run_on_event_callback(
            invocation_context=ctx, event=event
        )
        event = replaced if replaced is not None else event
        if not event.partial:
            await self._append(ctx.session, event)
        return event

    async def _append(self, session: Session, event: Event) -> Event:
        """Store ``event`` (``append_event``) and keep it in this Runner's cached history."""
        appended = await self.session_service.append_event(session, event)
        self._history.remember(session, appended)
        return appended

    def run(
        self,
        *,
        user_id: str,
        session_id: str,
        new_message: types.Content | None = None,
        state_delta: dict[str, Any] | None = None,
        run_config: RunConfig | None = None,
        invocation_id: str | None = None,
    ) -> Iterator[Event]:
        """Synchronous ``run_async``: the invocation runs on its own event loop in a thread.

        The agent advances only when the caller asks for the next event, exactly
        as with ``run_async``; closing the iterator early stops the invocation.
        """
        handoff: queue.Queue[tuple[str, Any]] = queue.Queue()
        proceed = threading.Semaphore(0)
        stop = threading.Event()

        async def produce() -> None:
            events = self.run_async(
                user_id=user_id,
                session_id=session_id,
                invocation_id=invocation_id,
                new_message=new_message,
                state_delta=state_delta,
                run_config=run_config,
            )
            try:
                async for event in events:
                    handoff.put(("event", event))
                    await asyncio.to_thread(proceed.acquire)
                    if stop.is_set():
                        break
            except (Exception, asyncio.CancelledError) as exc:
                # Cancelled: another call interrupted this invocation (multitask_strategy).
                handoff.put(("error", exc))
                return
            finally:
                await events.aclose()
            handoff.put(("done", None))

        worker = threading.Thread(target=asyncio.run, args=(produce(),), daemon=True)
        worker.start()
        try:
            while True:
                kind, item = handoff.get()
                if kind == "error":
                    raise item
                if kind == "done":
                    return
                yield item
                proceed.release()
        finally:
            stop.set()
            proceed.release()
            worker.join()


class InMemoryRunner(Runner):
    """A Runner with in-memory session, artifact and memory services: for trying things out
    and for tests."""

    def __init__(
        self,
        agent: BaseAgent | None = None,
        *,
        app_name: str | None = None,
        plugins: list[BasePlugin] | None = None,
        app: App | None = None,
        node: BaseAgent | None = None,
        plugin_close_timeout: float = 5.0,
    ) -> None:
        if app is None and app_name is None:
            app_name = "InMemoryRunner"
        super().__init__(
            app=app,
            app_name=app_name if app is None else None,
            agent=agent,
            node=node,
            plugins=plugins,
            session_service=InMemorySessionService(),
            artifact_service=InMemoryArtifactService(),
            memory_service=InMemoryMemoryService(),
            plugin_close_timeout=plugin_close_timeout,
        )


def _first_request(events: list[Event], invocation_id: str) -> types.Content | None:
    """The user's message that started an invocation (not a later answer to a call).

    Searched from the newest event back, so the cost is the invocation's span, not the
    session's length.
    """
    for event in reversed(events):
        if event.invocation_id == invocation_id and starts_invocation(event):
            return event.content
    return None
