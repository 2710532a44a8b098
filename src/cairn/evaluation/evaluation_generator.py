"""Running an agent on an eval case: one session per case, one invocation per user turn.

The user turns come from a user simulator (the static one replays a written conversation;
the LLM-backed one talks to the agent as a scenario says). A turn that answers a pause (a
long-running tool's result, a confirmation, an input request) is sent as the function
responses it holds; their ids are matched by name to the calls the new run is waiting on,
since a new run's call ids differ from the recording's.

The events the run commits are turned back into ``Invocation`` records: each user event
starts one, so a turn that resumes a paused invocation (same invocation id) is its own
record, as it is its own turn of the written conversation.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any

from google.genai import types as genai_types
from pydantic import BaseModel

from cairn.agents.base_agent import BaseAgent
from cairn.apps.app import App
from cairn.artifacts.base_artifact_service import BaseArtifactService
from cairn.artifacts.in_memory_artifact_service import InMemoryArtifactService
from cairn.events.event import Event
from cairn.events.interrupts import pending_interrupts
from cairn.memory.base_memory_service import BaseMemoryService
from cairn.memory.in_memory_memory_service import InMemoryMemoryService
from cairn.plugins.base_plugin import BasePlugin
from cairn.runners.runner import Runner
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.session import Session

from ._turns import split_turns, turn_invocation
from .app_details import AppDetails
from .errors import AgentRunError
from .eval_case import EvalCase, Invocation, SessionInput
from .eval_set import EvalSet
from .request_intercepter_plugin import _RequestIntercepterPlugin
from .simulation.static_user_simulator import StaticUserSimulator
from .simulation.user_simulator import BaseUserSimulatorConfig, Status, UserSimulator
from .simulation.user_simulator_provider import UserSimulatorProvider

_USER_AUTHOR = "user"
_DEFAULT_APP_NAME = "EvaluationGenerator"
_DEFAULT_USER_ID = "test_user_id"


def _events_for(user_simulator: UserSimulator, events: list[Event]) -> list[Event]:
    """The events a simulator is shown: copies, so that it cannot change the run's, unless
    its ``get_next_user_message`` is the static simulator's, which never reads them (copying
    every event of the case at each turn would be most of a scripted case's cost)."""
    method = type(user_simulator).get_next_user_message
    if method is StaticUserSimulator.get_next_user_message:
        return events
    return copy.deepcopy(events)


class EvalCaseResponses(BaseModel):
    """An eval case and the invocations of each time it was run."""

    eval_case: EvalCase
    responses: list[list[Invocation]]


async def _get_or_create_eval_session(
    session_service: BaseSessionService,
    initial_session: SessionInput | None,
    fallback_session_id: str | None,
    app_name: str | None = None,
) -> Session:
    """The session a case runs in: the pinned one when it exists, else a new one."""
    app_name = app_name or (initial_session.app_name if initial_session else _DEFAULT_APP_NAME)
    user_id = initial_session.user_id if initial_session else _DEFAULT_USER_ID
    pinned = initial_session.session_id if initial_session else None
    if pinned:
        existing = await session_service.get_session(
            app_name=app_name, user_id=user_id, session_id=pinned
        )
        if existing is not None:
            return existing
    return await session_service.create_session(
        app_name=app_name,
        user_id=user_id,
        state=dict(initial_session.state) if initial_session else {},
        session_id=pinned or fallback_session_id or str(uuid.uuid4()),
    )


def answering_pending_calls(
    message: genai_types.Content, events: Sequence[Event]
) -> genai_types.Content:
    """``message`` with each function response's id set to the pending call it answers.

    A response whose id a pending call has is kept; any other goes to the oldest pending
    call of the same name not answered yet (a recorded answer carries the recording's
    ids). A message without function responses is returned as is.
    """
    parts = message.parts or []
    if not any(part.function_response for part in parts):
        return message
    pending = pending_interrupts(events)
    waiting_ids = {interrupt.id for interrupt in pending}
    taken = {
        part.function_response.id
        for part in parts
        if part.function_response and part.function_response.id in waiting_ids
    }
    remapped: list[genai_types.Part] = []
    for part in parts:
        response = part.function_response
        if response is None or response.id in waiting_ids:
            remapped.append(part)
            continue
        match = next(
            (i for i in pending if i.name == response.name and i.id not in taken),
            None,
        )
        if match is None:
            remapped.append(part)
            continue
        taken.add(match.id)
        remapped.append(
            part.model_copy(
                update={"function_response": response.model_copy(update={"id": match.id})}
            )
        )
    return message.model_copy(update={"parts": remapped})


def _runner_for(
    root_agent: BaseAgent,
    app: App | None,
    app_name: str,
    plugins: list[BasePlugin],
    **services: Any,
) -> Runner:
    if app is None:
        return Runner(agent=root_agent, app_name=app_name, plugins=plugins, **services)
    # A copy of the App, so its plugins and configuration take part and the caller's App
    # is left as it was; root_agent may be a sub-agent chosen for the eval.
    runner_app = app.model_copy(
        update={"plugins": [*app.plugins, *plugins], "root_agent": root_agent}
    )
    return Runner(app=runner_app, **services)


def _load_agent_module(module_name: str) -> tuple[BaseAgent, App | None, Callable[[], Any] | None]:
    """The root agent, App and ``reset_data`` of ``module_name`` (or its ``agent`` module)."""
    module = importlib.import_module(module_name)
    holder = getattr(module, "agent", module)
    app = getattr(holder, "app", None)
    if not isinstance(app, App):
        app = None
    root = app.root_agent if app is not None else getattr(holder, "root_agent", None)
    if not isinstance(root, BaseAgent):
        raise TypeError(
            f"Module {module_name!r} defines no `root_agent` (an agent) nor `app` (an App); "
            "define one of them at module level."
        )
    reset = getattr(holder, "reset_data", None)
    if reset is not None and not callable(reset):
        raise TypeError(f"{module_name}: `reset_data` must be callable when defined.")
    return root, app, reset


def _pick_agent(root_agent: BaseAgent, agent_name: str | None) -> BaseAgent:
    if not agent_name:
        return root_agent
    chosen = root_agent.find_agent(agent_name)
    if chosen is None:
        raise ValueError(f"Sub-agent {agent_name!r} not found under {root_agent.name!r}.")
    return chosen


class EvaluationGenerator:
    """Runs agents on eval cases and turns the events they commit into invocations."""

    @staticmethod
    async def generate_responses(
        eval_set: EvalSet,
        agent_module_path: str,
        repeat_num: int = 3,
        agent_name: str | None = None,
        user_simulator_config: BaseUserSimulatorConfig | None = None,
    ) -> list[EvalCaseResponses]:
        """Each case of ``eval_set`` run ``repeat_num`` times on the module's root agent (or
        its sub-agent ``agent_name``), each run on a new session."""
        results = []
        for eval_case in eval_set.eval_cases:
            responses = []
            for _ in range(repeat_num):
                simulator = UserSimulatorProvider(
                    user_simulator_config=user_simulator_config
                ).provide(eval_case)
                responses.append(
                    await EvaluationGenerator._process_query(
                        agent_module_path, simulator, agent_name, eval_case.session_input
                    )
                )
            results.append(EvalCaseResponses(eval_case=eval_case, responses=responses))
        return results

    @staticmethod
    async def _process_query(
        module_name: str,
        user_simulator: UserSimulator,
        agent_name: str | None = None,
        initial_session: SessionInput | None = None,
    ) -> list[Invocation]:
        root_agent, app, reset = _load_agent_module(module_name)
        return await EvaluationGenerator._generate_inferences_from_root_agent(
            _pick_agent(root_agent, agent_name),
            user_simulator=user_simulator,
            reset_func=reset,
            initial_session=initial_session,
            app=app,
        )

    @staticmethod
    async def _generate_inferences_for_single_user_invocation(
        runner: Runner, user_id: str, session_id: str, user_content: genai_types.Content
    ) -> AsyncGenerator[Event, None]:
        """The events of one turn, the stored user event first."""
        async for event in runner.run_async(
            user_id=user_id,
            session_id=session_id,
            new_message=user_content,
            yield_user_message=True,
        ):
            yield event

    @staticmethod
    async def _generate_inferences_from_root_agent(
        root_agent: BaseAgent,
        user_simulator: UserSimulator,
        reset_func: Callable[[], Any] | None = None,
        initial_session: SessionInput | None = None,
        session_id: str | None = None,
        session_service: BaseSessionService | None = None,
        artifact_service: BaseArtifactService | None = None,
        memory_service: BaseMemoryService | None = None,
        app: App | None = None,
        plugins: Sequence[BasePlugin] = (),
    ) -> list[Invocation]:
        """Runs the agent turn by turn with the simulator until it has no next message.

        ``plugins`` are added to the eval run's (after the App's own), e.g. a
        ``RecordedToolsPlugin`` that answers tool calls from a recording.
        """
        session_service = session_service or InMemorySessionService()
        session = await _get_or_create_eval_session(
            session_service,
            initial_session,
            session_id,
            app_name=app.name if app is not None else None,
        )
        if callable(reset_func):
            outcome = reset_func()
            if inspect.isawaitable(outcome):
                await outcome
        intercepter = _RequestIntercepterPlugin()
        runner = _runner_for(
            root_agent,
            app,
            session.app_name,
            [intercepter, *plugins],
            session_service=session_service,
            artifact_service=artifact_service or InMemoryArtifactService(),
            memory_service=memory_service or InMemoryMemoryService(),
        )
        events: list[Event] = list(session.events)
        first_new = len(events)
        durations: dict[str, float] = {}
        try:
            while True:
                next_message = await user_simulator.get_next_user_message(
                    _events_for(user_simulator, events[first_new:])
                )
                if next_message.status != Status.SUCCESS:
                    break
                if next_message.user_message is None:
                    raise RuntimeError("A user simulator's SUCCESS must carry a user message.")
                message = answering_pending_calls(next_message.user_message, events)
                started = time.monotonic()
                invocation_id = None
                async for (
                    event
                ) in EvaluationGenerator._generate_inferences_for_single_user_invocation(
                    runner, session.user_id, session.id, message
                ):
                    events.append(event)
                    invocation_id = invocation_id or event.invocation_id
                    if event.error_code and not event.partial and event.author != _USER_AUTHOR:
                        # A model call that failed: ADK's run raises here; cairn's commits
                        # the error, so the run is failed by hand (the session keeps it).
                        raise AgentRunError(
                            author=event.author,
                            error_code=event.error_code,
                            error_message=event.error_message,
                        )
                if invocation_id is not None:
                    durations[invocation_id] = round(
                        durations.get(invocation_id, 0.0) + time.monotonic() - started, 3
                    )
        finally:
            await runner.close()
        run_events = events[first_new:]
        ids = {event.invocation_id for event in run_events}
        return EvaluationGenerator.convert_events_to_eval_invocations(
            run_events,
            {
                invocation_id: intercepter.app_details(
                    invocation_id,
                    [e.author for e in run_events if e.invocation_id == invocation_id],
                )
                for invocation_id in ids
            },
            durations,
            model_durations_per_invocation={i: round(intercepter.model_seconds(i), 3) for i in ids},
            tool_durations_per_invocation={i: round(intercepter.tool_seconds(i), 3) for i in ids},
        )

    @staticmethod
    def convert_events_to_eval_invocations(
        events: list[Event],
        app_details_per_invocation: dict[str, AppDetails] | None = None,
        durations_per_invocation: dict[str, float] | None = None,
        *,
        model_durations_per_invocation: dict[str, float] | None = None,
        tool_durations_per_invocation: dict[str, float] | None = None,
    ) -> list[Invocation]:
        """Eval invocations from events: one per user turn (a message, or an answer to a
        pause), with the agent's events up to the next turn (``_turns``).

        Kept as intermediate events: those with a function call or response, text, inline
        data or grounding metadata. The last final response is the invocation's
        ``final_response`` (its text is not repeated among the intermediate events).
        Partial (streamed) events are skipped. Durations are by invocation id: only a run
        measures them, so events read back from a store carry none.
        """
        return [
            invocation.model_copy(
                update={
                    "duration": (durations_per_invocation or {}).get(invocation.invocation_id),
                    "model_duration": (model_durations_per_invocation or {}).get(
                        invocation.invocation_id
                    ),
                    "tool_duration": (tool_durations_per_invocation or {}).get(
                        invocation.invocation_id
                    ),
                    "app_details": (app_details_per_invocation or {}).get(invocation.invocation_id),
                }
            )
            for invocation in map(turn_invocation, split_turns(events))
        ]
