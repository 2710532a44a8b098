"""One call of a ``RemoteA2aAgent`` to its remote agent, from the record before the send to the
record of the answer; and a call found open on resume, settled by the in-doubt rule.

The rule (docs/human-in-the-loop.md, "In-doubt tool calls"): a message whose answer was never
recorded is sent again, with the same ``messageId``, only to a remote whose card says it
ignores a repeated one; otherwise the recorded task is read (``tasks/get``) when there is
one; otherwise the caller is asked (``in_doubt``: ``{"rerun": true}`` sends it again,
``{"result": ...}`` records what it answered). A message is never silently sent twice.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, Literal

import httpx
from a2a.client import Client
from a2a.types import (
    AgentCard,
    GetTaskRequest,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.types import Message as A2AMessage
from a2a.utils.errors import A2AError
from google.genai import types
from google.protobuf import json_format

from cairn.a2a.agent.card_resolution import deduplicates, rpc_urls
from cairn.a2a.agent.config import ParametersConfig
from cairn.a2a.agent.exchanges import (
    CONTEXT_ID,
    DELIVERED,
    ERROR,
    MESSAGE_ID,
    TASK_ID,
    TASK_STATE,
    Standing,
    accepted_event,
    call_event,
    close_event,
    in_doubt_event,
    mark_reply,
    new_call,
    resend_event,
)
from cairn.a2a.agent.task_progress import TaskProgress
from cairn.a2a.agent.utils import execute_after_request_interceptors
from cairn.a2a.converters.to_adk_event import ENDED_STATES, WAITING_STATES
from cairn.a2a.converters.utils import dict_to_struct
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.run_config import StreamingMode
from cairn.events.event import Event
from cairn.events.interrupts import A2A_AWAIT_TASK_FUNCTION, A2A_SEND_MESSAGE_FUNCTION

if TYPE_CHECKING:
    from cairn.a2a.agent.remote_a2a_agent import RemoteA2aAgent

_FAILED_STATES = ENDED_STATES - {TaskState.TASK_STATE_COMPLETED}
_POLL_FIRST, _POLL_MOST = 0.2, 5.0
"""Seconds between reads of a task a remote without streaming still works on."""

Fate = Literal["unsent", "unknown", "answered"]


def fate_of(error: BaseException) -> Fate:
    """Whether a failed call reached the remote: ``unsent`` (no connection was made),
    ``unknown`` (the connection broke after the request went out), ``answered`` (the
    remote answered with an error)."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
            return "unsent"
        if isinstance(seen, httpx.TransportError):
            return "unknown"
        seen = seen.__cause__ or seen.__context__
    return "answered"


def _cause(error: BaseException) -> str:
    text = getattr(error, "message", None) or str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}"


def recorded_message(call: types.FunctionCall) -> A2AMessage:
    """The message a send's record holds (empty for the wait for a task)."""
    return json_format.ParseDict(dict(call.args or {}).get("message") or {}, A2AMessage())


def state_name(state: int) -> str:
    return TaskState.Name(state) if state in TaskState.values() else str(state)


class Delivery:
    """The calls of one run of a ``RemoteA2aAgent`` to its remote agent."""

    def __init__(
        self,
        agent: RemoteA2aAgent,
        ctx: InvocationContext,
        client: Client,
        card: AgentCard,
        parameters: ParametersConfig,
    ) -> None:
        self.agent, self.ctx, self.client, self.card = agent, ctx, client, card
        self.parameters = parameters
        self.url = (rpc_urls(card) or [""])[0]
        self.call: types.FunctionCall | None = None

    # -- sending -----------------------------------------------------------------------------
    async def send(self, message: A2AMessage) -> AsyncGenerator[Event, None]:
        """Record the call, send ``message``, record the answer."""
        args = {
            "agent": self.agent.name,
            "url": self.url,
            "messageId": message.message_id,
            "contextId": message.context_id or None,
            "taskId": message.task_id or None,
            "message": json_format.MessageToDict(message),
        }
        call = new_call(A2A_SEND_MESSAGE_FUNCTION, {k: v for k, v in args.items() if v is not None})
        yield call_event(self.ctx, self.agent.name, call)
        async for event in self._deliver(call, message):
            yield event

    async def _deliver(
        self, call: types.FunctionCall, message: A2AMessage, *, again: bool = False
    ) -> AsyncGenerator[Event, None]:
        self.call = call
        progress = TaskProgress()
        request = SendMessageRequest(message=message)
        if self.parameters.request_metadata:
            request.metadata.CopyFrom(dict_to_struct(self.parameters.request_metadata))
        try:
            stream = self.client.send_message(request, context=self.parameters.client_call_context)
            async for item in stream:
                progress.add(item)
                if not progress.settled and progress.task_id is not None:
                    accepted = self._accepted(progress)
                    if accepted is not None:
                        yield accepted
                async for event in self._progress_events(item, progress):
                    yield event
        except (A2AError, httpx.HTTPError, ValueError) as error:
            async for event in self._failed(error, message, again=again):
                yield event
            return
        async for event in self._finish(progress):
            yield event

    def _accepted(self, progress: TaskProgress) -> Event | None:
        """Once the remote names its task, the send is answered and the wait recorded (so a
        crash from here on only reads the task again)."""
        call, task = self.call, progress.task
        if call is None or call.name != A2A_SEND_MESSAGE_FUNCTION or task is None:
            return None
        args = dict(call.args or {})
        wait = new_call(
            A2A_AWAIT_TASK_FUNCTION,
            {
                "agent": self.agent.name,
                "url": args.get("url", self.url),
                "messageId": args.get("messageId"),
                "taskId": task.id,
                "contextId": task.context_id,
            },
        )
        result = {
            "taskId": task.id,
            "contextId": task.context_id,
            "state": state_name(progress.state),
        }
        self.call = wait
        return accepted_event(self.ctx, self.agent.name, call, result, wait)

    async def _finish(self, progress: TaskProgress) -> AsyncGenerator[Event, None]:
        """Wait for a task the remote still works on, then record its answer."""
        if progress.message is None and progress.task is None:
            async for event in self._error_reply("the remote agent answered nothing", True):
                yield event
            return
        if not progress.settled:
            accepted = self._accepted(progress)
            if accepted is not None:
                yield accepted
            try:
                async for event in self._follow(progress):
                    yield event
            except (A2AError, httpx.HTTPError, TimeoutError) as error:
                text = f"could not follow its task {progress.task_id}: {_cause(error)}"
                async for event in self._error_reply(text, True):
                    yield event
                return
        async for event in self._reply(progress):
            yield event

    async def _follow(self, progress: TaskProgress) -> AsyncGenerator[Event, None]:
        """Read the task until it is settled: its stream when the remote streams, else
        ``tasks/get`` now and then, for at most the agent's timeout."""
        task_id = progress.task_id or ""
        deadline = asyncio.get_running_loop().time() + self.agent.timeout
        delay = _POLL_FIRST
        while True:
            progress.adopt(await self._get_task(task_id))
            if progress.settled:
                return
            if self.card.capabilities.streaming:
                try:
                    subscription = self.client.subscribe(
                        SubscribeToTaskRequest(id=task_id),
                        context=self.parameters.client_call_context,
                    )
                    async for item in subscription:
                        progress.add(item)
                        async for event in self._progress_events(item, progress):
                            yield event
                        if progress.settled:
                            return
                except A2AError:
                    pass  # not streamable (any more): read it instead
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(
                    f"the task was still {state_name(progress.state)} after "
                    f"{self.agent.timeout:.0f} s"
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, _POLL_MOST)

    async def _get_task(self, task_id: str) -> Task:
        return await self.client.get_task(
            GetTaskRequest(id=task_id), context=self.parameters.client_call_context
        )

    async def _progress_events(
        self, item: StreamResponse, progress: TaskProgress
    ) -> AsyncGenerator[Event, None]:
        """What a streamed update shows while the task goes on: partial events (never
        stored), for a caller that streams (``StreamingMode.SSE``)."""
        if self.ctx.run_config.streaming_mode != StreamingMode.SSE or progress.settled:
            return
        config, kind = self.agent.config, item.WhichOneof("payload")
        event: Event | None = None
        if kind == "status_update":
            event = config.a2a_status_update_converter(
                item.status_update, self.agent.name, self.ctx, self.agent.a2a_part_converter
            )
            for part in event.content.parts or [] if event and event.content else []:
                part.thought = True  # the remote's progress notes, not its answer
        elif kind == "artifact_update":
            event = config.a2a_artifact_update_converter(
                item.artifact_update, self.agent.name, self.ctx, self.agent.a2a_part_converter
            )
        if event is None or event.content is None:
            return
        event.partial = True
        shown = await execute_after_request_interceptors(
            config.request_interceptors, self.ctx, item, event
        )
        if shown is not None:
            yield shown

    # -- the answer --------------------------------------------------------------------------
    async def _reply(self, progress: TaskProgress) -> AsyncGenerator[Event, None]:
        """The remote's answer as one event (its text, files, or what it waits on), then the
        call's result."""
        call = self.call
        assert call is not None
        config, agent, ctx = self.agent.config, self.agent, self.ctx
        message, task = progress.message, progress.task
        answered: Any = message if message is not None else task
        if message is not None:
            event = config.a2a_message_converter(message, agent.name, ctx, agent.a2a_part_converter)
            task_id, context_id, state = message.task_id, message.context_id, None
        else:
            assert task is not None
            event = config.a2a_task_converter(task, agent.name, ctx, agent.a2a_part_converter)
            task_id, context_id, state = task.id, task.context_id, task.status.state
        if event is None:
            event = Event(invocation_id=ctx.invocation_id, author=agent.name, branch=ctx.branch)
        event.partial = None
        if state in _FAILED_STATES and not event.error_message:
            said = (
                "\n".join(p.text for p in (event.content.parts or []) if p.text)
                if event.content
                else ""
            )
            # The remote's own code when it sent one (adk_error_code: a failed model call)
            event.error_code = event.error_code or state_name(state or 0)
            event.error_message = (
                f"remote agent {agent.name!r}: its task {task_id} ended "
                f"{state_name(state or 0)}" + (f": {said}" if said else "")
            )
        shown = await execute_after_request_interceptors(
            config.request_interceptors, ctx, answered, event
        )
        args = dict(call.args or {})
        details = {
            TASK_ID: task_id or None,
            CONTEXT_ID: context_id or None,
            TASK_STATE: state_name(state) if state is not None else None,
            MESSAGE_ID: args.get("messageId"),
        }
        if shown is not None:
            yield mark_reply(shown, call, **details)
        result = {"taskId": task_id or None, "contextId": context_id or None}
        if state is not None:
            result["state"] = state_name(state)
        yield close_event(ctx, agent.name, call, {k: v for k, v in result.items() if v})

    async def _error_reply(self, text: str, delivered: bool) -> AsyncGenerator[Event, None]:
        """A failed call: an error event (``A2AClientError``), then the call's result.
        ``delivered``: the remote has the message (its reply ends a turn of the
        conversation); else the next message carries the same conversation again."""
        call, agent, ctx = self.call, self.agent, self.ctx
        assert call is not None
        message = f"remote agent {agent.name!r} ({self.url}): {text}"
        event = Event(
            invocation_id=ctx.invocation_id,
            author=agent.name,
            branch=ctx.branch,
            error_code="A2AClientError",
            error_message=message,
        )
        args = dict(call.args or {})
        details = {
            ERROR: message,
            DELIVERED: delivered,
            MESSAGE_ID: args.get("messageId"),
            CONTEXT_ID: args.get("contextId"),
        }
        yield mark_reply(event, call, **details)
        yield close_event(ctx, agent.name, call, {"error": message})

    async def _failed(
        self, error: BaseException, message: A2AMessage, *, again: bool
    ) -> AsyncGenerator[Event, None]:
        """A call that failed: the task is read when it is known; else an error when the
        message never left or the remote answered with one, and in doubt when the
        connection broke after the request went out."""
        call = self.call
        assert call is not None
        if call.name == A2A_AWAIT_TASK_FUNCTION:
            async for event in self._await(call):  # the task is known: what became of it
                yield event
            return
        fate = fate_of(error)
        if fate != "unknown":
            reached = "could not be reached" if fate == "unsent" else "answered with an error"
            async for event in self._error_reply(f"{reached}: {_cause(error)}", False):
                yield event
            return
        if deduplicates(self.card) and not again:
            async for event in self._deliver(call, message, again=True):
                yield event
            return
        async for event in self._ask(call, f"the connection broke ({_cause(error)})"):
            yield event

    # -- resuming ----------------------------------------------------------------------------
    async def settle(self, now: Standing) -> AsyncGenerator[Event, None]:
        """A call found open (its process stopped, or its answer was lost): the in-doubt rule."""
        call = now.call
        assert call is not None
        self.call = call
        if call.name == A2A_AWAIT_TASK_FUNCTION:
            async for event in self._await(call):
                yield event
            return
        args = dict(call.args or {})
        message = recorded_message(call)
        if now.doubt_id is not None:
            answer = now.doubt_answer if isinstance(now.doubt_answer, dict) else {}
            if answer.get("rerun") is True:
                again = new_call(A2A_SEND_MESSAGE_FUNCTION, args)
                yield resend_event(self.ctx, self.agent.name, call, again)
                async for event in self._deliver(again, message, again=True):
                    yield event
            else:
                async for event in self._given(answer.get("result")):
                    yield event
            return
        if deduplicates(self.card):
            async for event in self._deliver(call, message, again=True):
                yield event
            return
        task_id = args.get("taskId")
        if not task_id:
            async for event in self._ask(call, "the process sending it stopped"):
                yield event
            return
        try:
            task = await self._get_task(str(task_id))
        except (A2AError, httpx.HTTPError) as error:
            why = (
                f"the process sending it stopped, and task {task_id} could not be read "
                f"({_cause(error)})"
            )
            async for event in self._ask(call, why):
                yield event
            return
        received = message.message_id in {m.message_id for m in task.history}
        if not received and task.status.state in WAITING_STATES:
            why = f"the process sending it stopped and task {task_id} still waits for an answer"
            async for event in self._ask(call, why):
                yield event
            return
        progress = TaskProgress()
        progress.adopt(task)
        async for event in self._finish(progress):
            yield event

    async def _await(self, call: types.FunctionCall) -> AsyncGenerator[Event, None]:
        """A recorded wait for a task: read the task again (reading twice changes nothing)."""
        args = dict(call.args or {})
        progress = TaskProgress()
        progress.adopt(
            Task(id=str(args.get("taskId")), context_id=str(args.get("contextId") or ""))
        )
        async for event in self._finish(progress):
            yield event

    async def _ask(self, call: types.FunctionCall, why: str) -> AsyncGenerator[Event, None]:
        args = dict(call.args or {})
        message = (
            f"The message {args.get('messageId')} to remote agent {self.agent.name!r} "
            f"({args.get('url', self.url)}) was sent, but its answer was never recorded: {why}. "
            "The remote agent may or may not have received it, and its card does not say it "
            'ignores a message sent twice. Answer {"rerun": true} to send it again (same '
            'messageId), or {"result": ...} with what it answered.'
        )
        yield in_doubt_event(self.ctx, self.agent, call, message)

    async def _given(self, result: Any) -> AsyncGenerator[Event, None]:
        """What the caller says the remote answered, recorded as its answer."""
        call, ctx, agent = self.call, self.ctx, self.agent
        assert call is not None
        text = result if isinstance(result, str) else json.dumps(result, default=str)
        event = Event(
            invocation_id=ctx.invocation_id,
            author=agent.name,
            branch=ctx.branch,
            content=types.Content(role="model", parts=[types.Part(text=text)]),
        )
        args = dict(call.args or {})
        details = {MESSAGE_ID: args.get("messageId"), CONTEXT_ID: args.get("contextId")}
        yield mark_reply(event, call, **details)
        yield close_event(ctx, agent.name, call, {"result": result})
