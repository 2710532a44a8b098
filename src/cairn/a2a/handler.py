"""``CairnRequestHandler``: the A2A protocol (a2a-sdk's ``RequestHandler``) over cairn's runs.

A task is a run (its id is the invocation id) and its context is the session, so every
answer is read from the log and the runs' rows, in any process sharing the store, after
any restart: there is no in-memory task store. ``message/send`` starts a run (a new task) or
answers a paused one (a message naming the task); the message id is an idempotency key,
recorded beside the runs, so a resent message returns the task the first one made instead of
starting another run. ``tasks/resubscribe`` tails the log. Errors reach the client as A2A
errors naming what was wrong; an unexpected failure says only its error id, under which the
server's log has the details.

Served with a ``RunConfig`` whose ``streaming_mode`` is SSE, tasks run streaming: a stream
(``message/stream``) forwards the model's partial text as chunks of the task's ``response``
artifact (``append`` after a segment's first chunk, ``lastChunk`` false), which the final
answer replaces when the task completes; partial events are never stored, so the task as
read later is the same either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from typing import Any

from a2a import types as a2a_types
from a2a.server.context import ServerCallContext
from a2a.server.events import Event as A2AEvent
from a2a.server.request_handlers import RequestHandler
from a2a.utils import errors as a2a_errors
from google.genai import types as genai_types

from cairn.a2a.converters.event_converter import event_metadata, message_from_event
from cairn.a2a.converters.part_converter import convert_genai_part_to_a2a_part
from cairn.a2a.converters.request_converter import (
    A2A_METADATA_KEY,
    anonymous_user_id,
    convert_a2a_parts_to_content,
)
from cairn.a2a.converters.utils import dict_to_struct, struct_to_dict
from cairn.a2a.push import PushNotifier, config_json, config_message
from cairn.a2a.tasks import (
    RESPONSE_ARTIFACT,
    TERMINAL_STATES,
    ArtifactLoader,
    TaskRecord,
    build_task,
    state_of,
    stop_of,
)
from cairn.agents.invocation_context import new_invocation_id
from cairn.agents.run_config import RunConfig, StreamingMode
from cairn.errors import AlreadyExistsError, CairnError, SessionBusyError
from cairn.events.event import Event
from cairn.events.interrupts import answered_ids
from cairn.runs.live import Subscription
from cairn.runs.service import Runs
from cairn.runs.webhooks import WebhookUrlError
from cairn.sessions.a2a_store import A2aPushConfig, A2aStore, A2aTask
from cairn.sessions.lease import holder_is_gone, lease_holder
from cairn.sessions.run_store import RunStatus, StoredRun

logger = logging.getLogger("cairn.a2a")

ArtifactLoaderFactory = Callable[[A2aTask], ArtifactLoader]
"""Gives the loader of the artifacts of a task's session."""

PRINCIPAL_STATE = "cairn_principal"
"""Where a server puts the caller's authenticated user id in ``ServerCallContext.state``
(None or absent: nobody authenticated, conversations run as ``A2A_USER_<contextId>``)."""


@contextlib.contextmanager
def _a2a_errors() -> Iterator[None]:
    """cairn's errors as A2A ``InvalidParams`` (their messages say what to fix); anything
    else as an internal error that names only its error id."""
    try:
        yield
    except a2a_errors.A2AError:
        raise
    except CairnError as exc:
        raise a2a_errors.InvalidParamsError(message=str(exc)) from None
    except Exception:
        error_id = uuid.uuid4().hex[:12]
        logger.exception("A2A request failed (error id %s)", error_id)
        raise a2a_errors.InternalError(
            message=f"the server failed to handle the request; its log has it under error id "
            f"{error_id}"
        ) from None


def streaming_of(run_config: RunConfig | None) -> bool:
    """Whether tasks run streaming under ``run_config`` (its ``streaming_mode`` is SSE).
    ``ValueError`` naming any other setting: a task's run takes only its streaming mode from
    the server (the rest from the app and the request)."""
    if run_config is None:
        return False
    others = sorted(run_config.model_fields_set - {"streaming_mode"})
    if others:
        raise ValueError(
            f"the A2A server's run_config sets {', '.join(others)}; only streaming_mode is "
            "used (StreamingMode.SSE streams partial text to A2A clients): leave the others out"
        )
    return run_config.streaming_mode == StreamingMode.SSE


async def _from_start(live: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """A run's events from a listener subscribed when it was submitted (nothing missed);
    its failure ends them (the run's row says how)."""
    with contextlib.suppress(Exception):
        async for event in live:
            yield event


def _stop_listening(live: AsyncIterator[Event] | None) -> None:
    """Close a run's live subscription (``Runs.start``'s listener), if there is one."""
    close = getattr(live, "close", None)
    if close is not None:
        close()


class CairnRequestHandler(RequestHandler):
    """Serves one app's agent over A2A from ``runs`` (its store, executor and Runner)."""

    def __init__(
        self,
        *,
        app_name: str,
        runs: Runs,
        a2a_store: A2aStore,
        agent_card: a2a_types.AgentCard,
        artifacts: ArtifactLoaderFactory | None = None,
        push: PushNotifier | None = None,
        run_config: RunConfig | None = None,
    ) -> None:
        self.streaming = streaming_of(run_config)
        self.app_name = app_name
        self.runs = runs
        self.store = a2a_store
        self.agent_card = agent_card
        self.artifacts = artifacts
        self.push = push or PushNotifier(a2a_store)
        self._watchers: dict[str, asyncio.Task[None]] = {}
        self._rewatch: set[str] = set()
        self.holder = lease_holder(f"a2a-push-{uuid.uuid4().hex[:8]}")
        """This handler's name in the claims of the notifications it sends."""
        self._rearming: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Re-arm push notifications (``rearm``) in the background: call it when the server
        starts (a store that cannot be reached yet does not hold the start up)."""
        if self._rearming is None or self._rearming.done():
            self._rearming = asyncio.create_task(self._rearm_logged())

    async def _rearm_logged(self) -> None:
        try:
            await self.rearm()
        except Exception:
            logger.exception("A2A push notifications of app %r not re-armed", self.app_name)

    async def rearm(self) -> list[str]:
        """Watch the tasks with push configs whose runs are active (the process that watched
        them may have stopped), and send a stop's notification whose sender is gone before
        it was done. Returns the ids of the tasks watched."""
        watched = []
        for row in await self.store.list_push_tasks(self.app_name):
            run = await self.runs.store.get_run(*self._where(row), row.task_id)
            if run is None:
                continue
            if run.status.active:
                self._watch(row, run)
                watched.append(row.task_id)
                continue
            stop = stop_of(await self._record(row))
            held = None if stop is None else await self.store.push_claim(*self._at(row), stop)
            if held is not None and not held.done and holder_is_gone(held.holder):
                await self._notify_stop(row)
        return watched

    async def aclose(self) -> None:
        """Stop the push watchers of this process (the tasks themselves go on)."""
        watchers = list(self._watchers.values())
        if self._rearming is not None:
            watchers.append(self._rearming)
        for watcher in watchers:
            watcher.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)

    # -- reading tasks -----------------------------------------------------------------------
    def _user(self, context: ServerCallContext, context_id: str) -> str:
        user = context.state.get(PRINCIPAL_STATE)
        return user if isinstance(user, str) and user else anonymous_user_id(context_id)

    async def _task_row(self, task_id: str, context: ServerCallContext) -> A2aTask:
        row = await self.store.get_task(self.app_name, task_id) if task_id else None
        caller = context.state.get(PRINCIPAL_STATE)
        if row is None or (isinstance(caller, str) and caller and row.user_id != caller):
            raise a2a_errors.TaskNotFoundError(
                message=f"app {self.app_name!r} has no task {task_id!r} (of yours); "
                "send a message without a task id to start one"
            )
        return row

    async def _record(self, row: A2aTask) -> TaskRecord:
        run = await self.runs.store.get_run(self.app_name, row.user_id, row.session_id, row.task_id)
        events = await self.runs.sessions.list_invocation_events(
            app_name=self.app_name,
            user_id=row.user_id,
            session_id=row.session_id,
            invocation_id=row.task_id,
        )
        return TaskRecord(row, run, events)

    def _loader(self, row: A2aTask) -> ArtifactLoader | None:
        return None if self.artifacts is None else self.artifacts(row)

    async def _task(self, row: A2aTask, history_length: int | None = None) -> a2a_types.Task:
        record = await self._record(row)
        return await build_task(record, self._loader(row), history_length)

    @staticmethod
    def _history_length(params: Any) -> int | None:
        has = getattr(params, "HasField", None)
        if has is not None and has("history_length"):
            length = int(params.history_length)
            if length < 0:
                raise a2a_errors.InvalidParamsError(
                    message=f"historyLength must not be negative; got {length}"
                )
            return length
        return None

    async def on_get_task(
        self, params: a2a_types.GetTaskRequest, context: ServerCallContext
    ) -> a2a_types.Task | None:
        with _a2a_errors():
            row = await self._task_row(params.id, context)
            return await self._task(row, self._history_length(params))

    async def on_list_tasks(
        self, params: a2a_types.ListTasksRequest, context: ServerCallContext
    ) -> a2a_types.ListTasksResponse:
        with _a2a_errors():
            caller = context.state.get(PRINCIPAL_STATE)
            if not params.context_id and not (isinstance(caller, str) and caller):
                raise a2a_errors.InvalidParamsError(
                    message="listing tasks needs a contextId (the conversation whose tasks "
                    "to list), or a server that authenticates its callers"
                )
            user = self._user(context, params.context_id)
            size = params.page_size if params.HasField("page_size") else 50
            if not 1 <= size <= 100:
                raise a2a_errors.InvalidParamsError(
                    message=f"pageSize must be between 1 and 100; got {size}"
                )
            page = await self.runs.list(
                self.app_name,
                user,
                params.context_id or None,
                limit=size,
                cursor=params.page_token or None,
            )
            tasks = []
            for run in page.runs:
                row = await self.store.get_task(self.app_name, run.run_id)
                if row is None:
                    continue  # a run started some other way, not an A2A task
                task = await self._task(row, self._history_length(params))
                wanted = params.status
                if wanted != a2a_types.TaskState.TASK_STATE_UNSPECIFIED and (
                    task.status.state != wanted
                ):
                    continue
                if not params.include_artifacts:
                    task.ClearField("artifacts")
                tasks.append(task)
            return a2a_types.ListTasksResponse(
                tasks=tasks, next_page_token=page.next_cursor or "", page_size=size
            )

    # -- sending -----------------------------------------------------------------------------
    async def on_message_send(
        self, params: a2a_types.SendMessageRequest, context: ServerCallContext
    ) -> a2a_types.Task | a2a_types.Message:
        with _a2a_errors():
            row, run, _, _ = await self._start(params, context)
            length = self._history_length(params.configuration)
            if params.configuration.return_immediately:
                return await self._task(row, length)
            settled, events = await self._settled(run)
            if events is None:
                return await self._task(row, length)
            return await build_task(TaskRecord(row, settled, events), self._loader(row), length)

    async def _settled(self, run: StoredRun) -> tuple[StoredRun, list[Event] | None]:
        """Return once the run has ended or paused: its settled row, and (a run this
        process executed, whose events the Runner vouches for) its invocation's events as
        the log holds them, so the answer needs no read of them. A run this process
        executes is followed to its end (its row is settled by then), so the answer goes out
        at once; another process's run is read until it has settled."""
        live = self.runs.executor.live(run, events=False)
        if live is not None:
            with contextlib.suppress(Exception):  # a failed run: its row says how
                async for _ in live:
                    pass
        settled = await self.runs.wait(run)
        outcome = live.outcome if isinstance(live, Subscription) else None
        return settled, outcome.events if outcome is not None else None

    async def on_message_send_stream(
        self, params: a2a_types.SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[A2AEvent]:
        with _a2a_errors():
            row, run, after, live = await self._start(params, context, listen=self.streaming)
            try:
                task = await self._task(row, self._history_length(params.configuration))
                if after is None or task.status.state in TERMINAL_STATES:
                    # A new task (or a resent message's ended one) opens with the Task; an
                    # answered task opens with a working status update, as google-adk's
                    # server does: a client shows an opening Task's history (the pause it
                    # answered).
                    yield task
                else:
                    yield self._opening(row)
                if task.status.state in TERMINAL_STATES or run.status is RunStatus.PAUSED:
                    if after is not None and task.status.state not in TERMINAL_STATES:
                        yield a2a_types.TaskStatusUpdateEvent(
                            task_id=task.id, context_id=task.context_id, status=task.status
                        )
                    return
                async for event in self._follow(row, run, after, live):
                    yield event
            finally:
                _stop_listening(live)

    @staticmethod
    def _opening(row: A2aTask) -> a2a_types.TaskStatusUpdateEvent:
        status = a2a_types.TaskStatus(state=a2a_types.TaskState.TASK_STATE_WORKING)
        return a2a_types.TaskStatusUpdateEvent(
            task_id=row.task_id, context_id=row.session_id, status=status
        )

    async def _start(
        self,
        params: a2a_types.SendMessageRequest,
        context: ServerCallContext,
        *,
        listen: bool = False,
    ) -> tuple[A2aTask, StoredRun, str | None, AsyncIterator[Event] | None]:
        """Start or answer the task the message is for; returns where it lives, its run, the
        last event of its invocation before this message (None: a new task) and (``listen``)
        the run's events from its start, partial chunks too, when this process runs it."""
        message = params.message
        if not message.message_id:
            raise a2a_errors.InvalidParamsError(
                message="the message has no messageId; give every message a unique id (a "
                "resent message keeps its id, and is not acted on twice)"
            )
        content = convert_a2a_parts_to_content(message.parts)
        if not content.parts:
            raise a2a_errors.InvalidParamsError(
                message="the message has no part cairn can read; send text, a file or data"
            )
        metadata = struct_to_dict(params.metadata) if params.HasField("metadata") else {}
        custom = {A2A_METADATA_KEY: metadata} if metadata else None
        if message.task_id:
            row = await self._task_row(message.task_id, context)
            if message.context_id and message.context_id != row.session_id:
                raise a2a_errors.InvalidParamsError(
                    message=f"task {row.task_id!r} is in context {row.session_id!r}, not "
                    f"{message.context_id!r}; send the task's contextId or none"
                )
            run, after, live = await self._answer(row, message, content, custom, listen)
        else:
            row, run, live = await self._new_task(message, content, custom, context, listen)
            after = None
        try:
            if params.configuration.HasField("task_push_notification_config"):
                config = params.configuration.task_push_notification_config
                await self._store_push(row, config)
            if await self.store.list_push_configs(self.app_name, row.task_id):
                self._watch(row, run)
        except BaseException:
            _stop_listening(live)
            raise
        return row, run, after, live

    async def _new_task(
        self,
        message: a2a_types.Message,
        content: genai_types.Content,
        custom: dict[str, Any] | None,
        context: ServerCallContext,
        listen: bool = False,
    ) -> tuple[A2aTask, StoredRun, AsyncIterator[Event] | None]:
        # A message id is claimed in its context; a message that starts a new context is
        # claimed among the caller's new conversations (a resend cannot know the context).
        session_id = message.context_id or str(uuid.uuid4())
        user_id = self._user(context, session_id)
        caller = context.state.get(PRINCIPAL_STATE)
        claim = (user_id, session_id) if message.context_id else (str(caller or ""), "")
        task_id = new_invocation_id()
        earlier = await self.store.claim_message(self.app_name, *claim, message.message_id, task_id)
        if earlier is not None:
            stored = await self.store.get_task(self.app_name, earlier)
            if stored is not None:
                user_id, session_id = stored.user_id, stored.session_id
                first = await self.runs.store.get_run(self.app_name, user_id, session_id, earlier)
                if first is not None:
                    return stored, first, None  # a resent message: the first one's task
        row = A2aTask(self.app_name, earlier or task_id, user_id, session_id, time.time())
        await self._ensure_session(user_id, session_id, new=not message.context_id)
        with contextlib.suppress(AlreadyExistsError):
            await self.store.record_task(row)
        try:
            started = await self.runs.start(
                self.app_name,
                user_id,
                session_id,
                listen=listen,
                new_message=content,
                custom_metadata=custom,
                run_id=row.task_id,
                streaming=self.streaming,
            )
        except AlreadyExistsError:  # another server acts on the same message right now
            run = await self.runs.get(self.app_name, user_id, session_id, row.task_id)
            return row, run, None
        return row, started.run, started.events

    async def _ensure_session(self, user_id: str, session_id: str, *, new: bool) -> None:
        """Create the conversation's session unless it exists (``new``: its id was just made
        here, so there is nothing to look up first)."""
        sessions = self.runs.sessions
        key: dict[str, Any] = {
            "app_name": self.app_name,
            "user_id": user_id,
            "session_id": session_id,
        }
        if new or await sessions.get_session(**key) is None:
            with contextlib.suppress(AlreadyExistsError):
                await sessions.create_session(**key)

    async def _answer(
        self,
        row: A2aTask,
        message: a2a_types.Message,
        content: genai_types.Content,
        custom: dict[str, Any] | None,
        listen: bool = False,
    ) -> tuple[StoredRun, str | None, AsyncIterator[Event] | None]:
        """Answer the paused task with the message (its function responses, or its text as
        the answer to the one call it waits for)."""
        record = await self._record(row)
        run = record.run
        after = record.events[-1].id if record.events else None
        if run is None:
            raise a2a_errors.InvalidParamsError(
                message=f"task {row.task_id!r} has not started yet; wait for it (tasks/get) "
                "before answering it"
            )
        seen = await self.store.message_task(
            self.app_name, row.user_id, row.session_id, message.message_id
        )
        if seen is not None or self._already_answered(record, content):
            return run, after, None  # a resent answer: acted on once already
        if run.status is not RunStatus.PAUSED:
            state = a2a_types.TaskState.Name(state_of(record)).removeprefix("TASK_STATE_")
            raise a2a_errors.InvalidParamsError(
                message=f"task {row.task_id!r} is {state.lower().replace('_', '-')}, not waiting "
                "for input; send a message without a taskId (same contextId) to go on with "
                "the conversation"
            )
        answer = self._answer_content(record, content)
        live: AsyncIterator[Event] | None = None
        try:
            started = await self.runs.start(
                self.app_name,
                row.user_id,
                row.session_id,
                listen=listen,
                new_message=answer,
                custom_metadata=custom,
                streaming=self.streaming,
            )
            continued, live = started.run, started.events
        except SessionBusyError:  # the same answer, acted on right now by another server
            continued = await self.runs.get(self.app_name, row.user_id, row.session_id, row.task_id)
        await self.store.claim_message(
            self.app_name, row.user_id, row.session_id, message.message_id, row.task_id
        )
        return continued, after, live

    @staticmethod
    def _already_answered(record: TaskRecord, content: genai_types.Content) -> bool:
        ids = {p.function_response.id for p in content.parts or [] if p.function_response}
        ids.discard(None)
        return bool(ids) and ids <= answered_ids(record.events, record.task.task_id)

    @staticmethod
    def _answer_content(record: TaskRecord, content: genai_types.Content) -> genai_types.Content:
        parts = content.parts or []
        pending = record.pending()
        answers = [p.function_response for p in parts if p.function_response]
        if answers:
            waiting = {i.id for i in pending}
            stray = [a.id or a.name for a in answers if a.id not in waiting]
            if stray:
                raise a2a_errors.InvalidParamsError(
                    message=f"task {record.task.task_id!r} does not wait for {stray}; it waits "
                    f"for {sorted(waiting)}: answer those ids"
                )
            return content
        text = "".join(p.text or "" for p in parts)
        if len(pending) != 1 or pending[0].kind not in ("input", "long_running"):
            asked = ", ".join(f"{i.name} (id {i.id})" for i in pending) or "nothing"
            raise a2a_errors.InvalidParamsError(
                message=f"task {record.task.task_id!r} waits for {asked}; answer with a data "
                "part holding a function_response (adk_type) for each id"
            )
        interrupt = pending[0]
        response = genai_types.FunctionResponse(
            id=interrupt.id, name=interrupt.name, response={"result": text}
        )
        return genai_types.Content(
            role="user", parts=[genai_types.Part(function_response=response)]
        )

    # -- following a run -----------------------------------------------------------------------
    async def _follow(
        self,
        row: A2aTask,
        run: StoredRun,
        after: str | None,
        live: AsyncIterator[Event] | None = None,
    ) -> AsyncIterator[A2AEvent]:
        """The run's events after ``after`` as ``working`` status updates (its partial text
        as chunks of the ``response`` artifact), then its end (or pause) as the last status
        update (after the artifacts of a completed task). ``live``: the run's events from
        its start, as this process runs it (else they are read with ``Runs.stream``)."""
        where = {"app_name": row.app_name, "user_id": row.user_id, "session_id": row.session_id}
        chunked = False  # whether the current segment of partial text has sent a chunk
        async for event in _from_start(live) if live is not None else self.runs.stream(run, after):
            if event.partial:
                chunk = self._chunk(row, event, where, append=chunked)
                if chunk is not None:
                    chunked = True
                    yield chunk
                continue
            chunked = False
            update = self._working(row, event, where)
            if update is not None:
                yield update
        if live is not None:
            await self.runs.wait(run)  # its row settled: what the task is read from
        task = await self._task(row)
        if task.status.state == a2a_types.TaskState.TASK_STATE_COMPLETED:
            for artifact in task.artifacts:
                yield a2a_types.TaskArtifactUpdateEvent(
                    task_id=task.id, context_id=task.context_id, artifact=artifact, last_chunk=True
                )
        status = task.status
        if status.state == a2a_types.TaskState.TASK_STATE_COMPLETED:
            # The answer went out as the artifacts (and the working updates): a bare
            # completed status, as google-adk's server sends, so a client shows it once.
            status = a2a_types.TaskStatus(state=status.state, timestamp=status.timestamp)
        yield a2a_types.TaskStatusUpdateEvent(
            task_id=task.id, context_id=task.context_id, status=status
        )

    @staticmethod
    def _chunk(
        row: A2aTask, event: Event, where: dict[str, str], *, append: bool
    ) -> a2a_types.TaskArtifactUpdateEvent | None:
        """A partial event's text (not its thoughts) as a chunk of the ``response`` artifact:
        the first chunk of a segment replaces what the artifact held, the next ones append."""
        texts = [
            p
            for p in (event.content.parts or [] if event.content else [])
            if p.text and not p.thought
        ]
        parts = [convert_genai_part_to_a2a_part(p) for p in texts]
        found = [p for p in parts if p is not None]
        if event.author == "user" or not found:
            return None
        artifact = a2a_types.Artifact(
            artifact_id=f"{row.task_id}-{RESPONSE_ARTIFACT}",
            name=RESPONSE_ARTIFACT,
            parts=found,
            metadata=dict_to_struct(event_metadata(event, **where)),
        )
        return a2a_types.TaskArtifactUpdateEvent(
            task_id=row.task_id,
            context_id=row.session_id,
            artifact=artifact,
            append=append,
            last_chunk=False,
        )

    @staticmethod
    def _working(
        row: A2aTask, event: Event, where: dict[str, str]
    ) -> a2a_types.TaskStatusUpdateEvent | None:
        if event.partial or event.author == "user":
            return None
        message = message_from_event(event, metadata=event_metadata(event, **where))
        if message is None:
            return None
        message.task_id, message.context_id = row.task_id, row.session_id
        status = a2a_types.TaskStatus(state=a2a_types.TaskState.TASK_STATE_WORKING, message=message)
        return a2a_types.TaskStatusUpdateEvent(
            task_id=row.task_id, context_id=row.session_id, status=status
        )

    # -- cancelling, resubscribing -------------------------------------------------------------
    async def on_cancel_task(
        self, params: a2a_types.CancelTaskRequest, context: ServerCallContext
    ) -> a2a_types.Task | None:
        with _a2a_errors():
            row = await self._task_row(params.id, context)
            record = await self._record(row)
            run = record.run
            if run is None or run.status.ended:
                raise a2a_errors.TaskNotCancelableError(
                    message=f"task {row.task_id!r} has ended; there is nothing to cancel"
                )
            key = (self.app_name, row.user_id, row.session_id, row.task_id)
            if run.status is RunStatus.PAUSED:
                await self.runs.store.update_run(
                    *key,
                    expect_status={RunStatus.PAUSED},
                    status=RunStatus.CANCELLED,
                    ended_at=time.time(),
                )
            else:
                await self.runs.cancel(*key, wait=True)
            await self._notify_stop(row)
            return await self._task(row)

    async def on_subscribe_to_task(
        self, params: a2a_types.SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[A2AEvent]:
        with _a2a_errors():
            row = await self._task_row(params.id, context)
            record = await self._record(row)
            task = await build_task(record, self._loader(row))
            if task.status.state in TERMINAL_STATES:
                raise a2a_errors.UnsupportedOperationError(
                    message=f"task {row.task_id!r} has ended "
                    f"({a2a_types.TaskState.Name(task.status.state)}); read it with tasks/get"
                )
            yield task
            run = record.run
            if run is None or not run.status.active:
                return
            after = record.events[-1].id if record.events else None
            async for event in self._follow(row, run, after):
                yield event

    # -- push notifications --------------------------------------------------------------------
    async def _store_push(
        self, row: A2aTask, config: a2a_types.TaskPushNotificationConfig
    ) -> A2aPushConfig:
        try:
            self.push.check(config.url)
        except WebhookUrlError as exc:
            raise a2a_errors.InvalidParamsError(message=str(exc)) from None
        stored = A2aPushConfig(
            app_name=self.app_name,
            task_id=row.task_id,
            config_id=config.id or row.task_id,
            config=config_json(config),
            created_at=time.time(),
        )
        return await self.store.set_push_config(stored)

    def _watch(self, row: A2aTask, run: StoredRun) -> None:
        """Notify the task's push configs each time its run stops (ends or pauses). One
        watcher per task in this process; a task answered while its watcher is finishing is
        watched again by the same watcher."""
        if row.task_id in self._watchers:
            self._rewatch.add(row.task_id)
            return
        if not run.status.active:
            return

        async def watch() -> None:
            try:
                while True:
                    await self.runs.wait(run)
                    await self._notify_stop(row)
                    if row.task_id not in self._rewatch:
                        return
                    self._rewatch.discard(row.task_id)
            except Exception:
                logger.exception("push notification of task %s failed", row.task_id)
            finally:
                self._watchers.pop(row.task_id, None)
                self._rewatch.discard(row.task_id)

        self._watchers[row.task_id] = asyncio.create_task(watch())

    def _where(self, row: A2aTask) -> tuple[str, str, str]:
        return (self.app_name, row.user_id, row.session_id)

    def _at(self, row: A2aTask) -> tuple[str, str]:
        return (self.app_name, row.task_id)

    async def _notify_stop(self, row: A2aTask) -> None:
        """Notify the task's push configs of its current stop, unless another server (or
        watcher) has claimed that stop: one notification per stop."""
        record = await self._record(row)
        stop = stop_of(record)
        if stop is None or not await self._claim(row, stop):
            return
        await self.push.notify(self.app_name, await build_task(record, self._loader(row)))
        await self.store.finish_push(*self._at(row), stop)

    async def _claim(self, row: A2aTask, stop: str) -> bool:
        """Claim the stop's notification: a new claim, or one whose holder is gone (its
        process exited on this host) without having sent it."""
        if await self.store.claim_push(*self._at(row), stop, self.holder):
            return True
        held = await self.store.push_claim(*self._at(row), stop)
        if held is None or held.done or not holder_is_gone(held.holder):
            return False
        return await self.store.claim_push(*self._at(row), stop, self.holder, replacing=held.holder)

    async def on_create_task_push_notification_config(
        self, params: a2a_types.TaskPushNotificationConfig, context: ServerCallContext
    ) -> a2a_types.TaskPushNotificationConfig:
        with _a2a_errors():
            row = await self._task_row(params.task_id, context)
            stored = await self._store_push(row, params)
            run = (await self._record(row)).run
            if run is not None:
                self._watch(row, run)
            return config_message(stored)

    async def on_get_task_push_notification_config(
        self, params: a2a_types.GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> a2a_types.TaskPushNotificationConfig:
        with _a2a_errors():
            row = await self._task_row(params.task_id, context)
            for stored in await self.store.list_push_configs(self.app_name, row.task_id):
                if stored.config_id == (params.id or row.task_id):
                    return config_message(stored)
            raise a2a_errors.TaskNotFoundError(
                message=f"task {row.task_id!r} has no push notification config {params.id!r}"
            )

    async def on_list_task_push_notification_configs(
        self,
        params: a2a_types.ListTaskPushNotificationConfigsRequest,
        context: ServerCallContext,
    ) -> a2a_types.ListTaskPushNotificationConfigsResponse:
        with _a2a_errors():
            row = await self._task_row(params.task_id, context)
            stored = await self.store.list_push_configs(self.app_name, row.task_id)
            return a2a_types.ListTaskPushNotificationConfigsResponse(
                configs=[config_message(s) for s in stored]
            )

    async def on_delete_task_push_notification_config(
        self,
        params: a2a_types.DeleteTaskPushNotificationConfigRequest,
        context: ServerCallContext,
    ) -> None:
        with _a2a_errors():
            row = await self._task_row(params.task_id, context)
            await self.store.delete_push_config(self.app_name, row.task_id, params.id)

    async def on_get_extended_agent_card(
        self, params: a2a_types.GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> a2a_types.AgentCard:
        raise a2a_errors.UnsupportedOperationError(
            message="this agent has no extended card; read its card at the well-known path"
        )
