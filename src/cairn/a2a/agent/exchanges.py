"""How a ``RemoteA2aAgent``'s calls to its remote agent are recorded in the log, and where an
invocation stands, read back from those records.

A message to the remote agent is recorded like a tool call. Before it is sent, the agent
commits the call ``cairn_a2a_send_message`` with the message itself (its ``messageId`` is
the idempotency key) and the remote task and context it goes to, if known. When a streamed
answer names its task, the send is answered (``{"taskId": ..., "state": ...}``) and a
second call, ``cairn_a2a_await_task``, records the wait for that task: resuming it only
reads the task again. What the remote answered is one event (its text, files, or the
interrupt it waits on), then the call's result closes the call.

A call found open when the invocation resumes (its process died mid-call) is in doubt:
``RemoteA2aAgent`` resends the recorded message only to a remote that says it ignores a
repeated ``messageId``, reads the recorded task otherwise, and asks the caller when it can
do neither (``cairn_resolve_in_doubt``).
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any, Literal

from google.genai import types

from cairn.agents.base_agent import BaseAgent
from cairn.agents.invocation_context import InvocationContext
from cairn.agents.sub_agent_runs import run_start
from cairn.agents.tool_calls import interrupt_event
from cairn.events.event import Event
from cairn.events.interrupts import (
    A2A_AWAIT_TASK_FUNCTION,
    A2A_SEND_MESSAGE_FUNCTION,
    RESOLVE_IN_DOUBT_FUNCTION,
    starts_invocation,
)

A2A_METADATA_PREFIX = "a2a:"
"""The prefix of the ``custom_metadata`` keys a remote agent's events carry (ADK's)."""
RECORD = A2A_METADATA_PREFIX + "record"
"""Which record an event is: ``call``, ``accepted``, ``reply``, ``close`` or ``in_doubt``."""
CALL_ID = A2A_METADATA_PREFIX + "call_id"
TASK_ID = A2A_METADATA_PREFIX + "task_id"
CONTEXT_ID = A2A_METADATA_PREFIX + "context_id"
MESSAGE_ID = A2A_METADATA_PREFIX + "message_id"
TASK_STATE = A2A_METADATA_PREFIX + "task_state"
DELIVERED = A2A_METADATA_PREFIX + "delivered"
"""False on the reply to a message that never reached the remote (it was unreachable)."""
ERROR = A2A_METADATA_PREFIX + "error"

RECORD_CALLS = (A2A_SEND_MESSAGE_FUNCTION, A2A_AWAIT_TASK_FUNCTION)


@dataclasses.dataclass
class Standing:
    """Where this agent's run in the invocation stands, from its records."""

    kind: Literal["fresh", "open", "waiting", "answered", "done"]
    """``fresh``: nothing sent yet in this run; ``open``: a call without its answer (in
    doubt); ``waiting``: the remote (or an in-doubt question) waits for the user;
    ``answered``: the user answered what the remote waits on; ``done``: it answered."""
    call: types.FunctionCall | None = None
    """The open call (``open``)."""
    doubt_id: str | None = None
    """The in-doubt question asked about the open call, if any."""
    doubt_answer: Any = None
    """The user's answer to it (``open`` with a question answered)."""
    reply: Event | None = None
    """The remote's waiting reply (``waiting``/``answered``)."""
    answers: dict[str, types.FunctionResponse] = dataclasses.field(default_factory=dict)
    """The user's answers to the interrupts of ``reply``, by interrupt id."""


def _record_call(event: Event) -> types.FunctionCall | None:
    calls = [call for call in event.get_function_calls() if call.name in RECORD_CALLS]
    return calls[-1] if calls else None


def standing(ctx: InvocationContext, agent_name: str) -> Standing:
    """Where ``agent_name`` stands in its current run (this invocation, its branch)."""
    responses: dict[str, types.FunctionResponse] = {}
    by_user: dict[str, types.FunctionResponse] = {}
    doubt: tuple[str, str] | None = None
    closed: str | None = None
    events = ctx.session.events
    for index in range(len(events) - 1, run_start(ctx) - 1, -1):
        event = events[index]
        if event.invocation_id != ctx.invocation_id:
            continue
        if event.branch != ctx.branch:
            if starts_invocation(event):
                break
            continue
        for response in event.get_function_responses():
            if response.id:
                responses.setdefault(response.id, response)
                if event.author == "user":
                    by_user.setdefault(response.id, response)
        if event.author != agent_name:
            if starts_invocation(event):
                break
            continue
        record = (event.custom_metadata or {}).get(RECORD)
        if record == "close":
            closed = closed or str((event.custom_metadata or {}).get(CALL_ID))
            continue
        if record == "reply":
            if event.long_running_tool_ids:
                ids = sorted(event.long_running_tool_ids)
                answers = {i: by_user[i] for i in ids if i in by_user}
                kind: Literal["waiting", "answered"] = (
                    "answered" if len(answers) == len(ids) else "waiting"
                )
                return Standing(kind, reply=event, answers=answers)
            return Standing("done", reply=event)
        if record == "in_doubt" and doubt is None:
            [asked] = event.get_function_calls()
            doubt = (asked.id or "", str((event.custom_metadata or {}).get(CALL_ID)))
            continue
        call = _record_call(event) if record in ("call", "accepted") else None
        if call is None:
            continue
        if call.id in responses or call.id == closed:
            return Standing("done")  # answered without a reply (the remote's reply dropped)
        if doubt is not None and doubt[1] == call.id:
            answer = responses.get(doubt[0])
            return Standing(
                "open" if answer is not None else "waiting",
                call=call,
                doubt_id=doubt[0],
                doubt_answer=answer.response if answer is not None else None,
            )
        return Standing("open", call=call)
    return Standing("fresh")


def _event(
    ctx: InvocationContext, agent_name: str, record: str, call_id: str, **fields: Any
) -> Event:
    return Event(
        invocation_id=ctx.invocation_id,
        author=agent_name,
        branch=ctx.branch,
        custom_metadata={RECORD: record, CALL_ID: call_id},
        **fields,
    )


def new_call(name: str, args: dict[str, Any]) -> types.FunctionCall:
    return types.FunctionCall(id=f"a2a-{uuid.uuid4()}", name=name, args=args)


def call_event(ctx: InvocationContext, agent_name: str, call: types.FunctionCall) -> Event:
    """The record committed before a message is sent (or a task awaited)."""
    return _event(
        ctx,
        agent_name,
        "call",
        call.id or "",
        content=types.Content(role="model", parts=[types.Part(function_call=call)]),
    )


def accepted_event(
    ctx: InvocationContext,
    agent_name: str,
    sent: types.FunctionCall,
    result: dict[str, Any],
    wait: types.FunctionCall,
) -> Event:
    """The send answered with the task the remote made, and the wait for that task."""
    parts = [
        types.Part(
            function_response=types.FunctionResponse(id=sent.id, name=sent.name, response=result)
        ),
        types.Part(function_call=wait),
    ]
    return _event(
        ctx, agent_name, "accepted", wait.id or "", content=types.Content(role="model", parts=parts)
    )


def resend_event(
    ctx: InvocationContext,
    agent_name: str,
    doubted: types.FunctionCall,
    again: types.FunctionCall,
) -> Event:
    """A message in doubt sent again, as the caller said: the doubted call is closed and the
    new send recorded before it goes (a crash during it asks again)."""
    parts = [
        types.Part(
            function_response=types.FunctionResponse(
                id=doubted.id, name=doubted.name, response={"sentAgainAs": again.id}
            )
        ),
        types.Part(function_call=again),
    ]
    return _event(
        ctx, agent_name, "call", again.id or "", content=types.Content(role="model", parts=parts)
    )


def close_event(
    ctx: InvocationContext, agent_name: str, call: types.FunctionCall, result: dict[str, Any]
) -> Event:
    """The call's result, after the remote's answer is recorded."""
    response = types.FunctionResponse(id=call.id, name=call.name, response=result)
    return _event(
        ctx,
        agent_name,
        "close",
        call.id or "",
        content=types.Content(role="user", parts=[types.Part(function_response=response)]),
    )


def mark_reply(event: Event, call: types.FunctionCall, **metadata: Any) -> Event:
    """``event`` (what the remote answered) as the reply to ``call``."""
    event.custom_metadata = {
        **(event.custom_metadata or {}),
        RECORD: "reply",
        CALL_ID: call.id,
        **{key: value for key, value in metadata.items() if value is not None},
    }
    return event


def in_doubt_event(
    ctx: InvocationContext, agent: BaseAgent, call: types.FunctionCall, message: str
) -> Event:
    """The question to the caller about a call in doubt (an ``in_doubt`` interrupt)."""
    asked = interrupt_event(agent, ctx, RESOLVE_IN_DOUBT_FUNCTION, [(call, {"message": message})])
    asked.custom_metadata = {RECORD: "in_doubt", CALL_ID: call.id}
    return asked


def last_context_id(events: list[Event], agent_name: str) -> str | None:
    """The remote context of this agent's newest reply that reached the remote."""
    for event in reversed(events):
        if event.author == agent_name and is_remote_reply(event):
            found = (event.custom_metadata or {}).get(CONTEXT_ID)
            return str(found) if found else None
    return None


def is_remote_reply(event: Event) -> bool:
    """A reply the remote gave (not one for a message that never reached it)."""
    metadata = event.custom_metadata or {}
    return metadata.get(RECORD) == "reply" and metadata.get(DELIVERED) is not False
