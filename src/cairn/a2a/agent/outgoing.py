"""What a ``RemoteA2aAgent`` sends its remote agent: the conversation since the remote's last
turn (as ADK builds it), or the user's answers to what the remote waits on."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Literal

from a2a.types import Part as A2APart
from google.genai import types

from cairn.a2a.agent.exchanges import CONTEXT_ID, is_remote_reply
from cairn.a2a.converters.part_converter import GenAIPartToA2APartConverter
from cairn.a2a.converters.to_adk_event import (
    MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_AUTH,
    MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_INPUT,
)
from cairn.a2a.converters.utils import dict_to_struct, struct_to_dict
from cairn.agents.branches import sees
from cairn.agents.contents import retold
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event
from cairn.events.interrupts import PROTOCOL_FUNCTIONS, RECORD_FUNCTIONS
from cairn.sessions.session import Session

_STAND_IN_CALLS = {
    MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_INPUT,
    MOCK_FUNCTION_CALL_FOR_REQUIRED_USER_AUTH,
}
_NOT_SENT = PROTOCOL_FUNCTIONS | RECORD_FUNCTIONS
"""Confirmation, credential and in-doubt exchanges, and the records of A2A calls: between
the runtime and its user, never part of the conversation sent on."""
USER_INPUT_KEY = "is_user_input"
"""ADK's part metadata key marking what the user said (not another agent)."""


def _converted(part: types.Part, converter: GenAIPartToA2APartConverter) -> list[A2APart]:
    made = converter(part)
    return made if isinstance(made, list) else [made] if made is not None else []


def _below(event_branch: str | None, branch: str | None) -> bool:
    if event_branch is None or branch is None:
        return event_branch == branch
    return event_branch == branch or event_branch.startswith(branch + ".")


def _visible(ctx: InvocationContext, event: Event) -> bool:
    if not sees(ctx.branch, event.branch):
        return False
    return not ctx.isolated or _below(event.branch, ctx.branch)


def _kept(part: types.Part) -> bool:
    """A part of the conversation (not a thought, nor the runtime's own exchanges)."""
    if part.thought and not (part.function_call or part.function_response):
        return False
    call, response = part.function_call, part.function_response
    if call is not None and call.name in _NOT_SENT:
        return False
    return not (response is not None and response.name in _NOT_SENT)


def _mark_user_input(part: A2APart) -> A2APart:
    metadata = struct_to_dict(part.metadata) if part.HasField("metadata") else {}
    metadata[USER_INPUT_KEY] = True
    part.metadata.CopyFrom(dict_to_struct(metadata))
    return part


def _said_by_user(
    parts: Sequence[types.Part], converter: GenAIPartToA2APartConverter
) -> list[A2APart]:
    """The user's own parts; a response to someone else's call becomes a line of text (the
    remote has no call to resume)."""
    found: list[A2APart] = []
    for part in parts:
        response = part.function_response
        if response is not None:
            text = f"Tool {response.name} returned: {json.dumps(response.response, default=str)}"
            found.append(_mark_user_input(A2APart(text=text)))
            continue
        found.extend(_mark_user_input(p) for p in _converted(part, converter))
    return found


def conversation_parts(
    ctx: InvocationContext,
    agent_name: str,
    converter: GenAIPartToA2APartConverter,
    *,
    full_history_when_stateless: bool = False,
) -> tuple[list[A2APart], str | None]:
    """The parts of the conversation since the remote's last reply, and that reply's
    context id. Events this agent cannot see are left out; the user's words go as they
    are (marked ``is_user_input``); other agents' turns are retold as text ("For
    context: ..."), as ADK does. A remote that kept no context (its reply named none) gets
    the whole history when ``full_history_when_stateless``."""
    picked: list[Event] = []
    context_id: str | None = None
    for event in reversed(ctx.session.events):
        if not _visible(ctx, event) or event.partial:
            continue
        if event.author == agent_name:
            if is_remote_reply(event):
                found = (event.custom_metadata or {}).get(CONTEXT_ID)
                context_id = str(found) if found else None
                if context_id or not full_history_when_stateless:
                    break
            continue  # its own records and replies are the remote's side already
        picked.append(event)
    parts: list[A2APart] = []
    for event in reversed(picked):
        content = event.content
        if content is None:
            continue
        kept = [p for p in content.parts or [] if _kept(p)]
        if not kept:
            continue
        handed_over = event.branch == ctx.branch and ctx.branch is not None
        if event.author == "user" or (handed_over and content.role == "user"):
            parts += _said_by_user(kept, converter)
            continue
        shown = types.Content(role=content.role, parts=kept)
        lines = retold(event.model_copy(update={"content": shown}))
        if lines:
            parts.append(A2APart(text="\n".join(["For context:", *lines])))
    return parts, context_id


def rendered_answer(response: dict[str, Any] | None) -> str | None:
    """A human's answer to a stand-in call as text (``{"result": x}`` is x)."""
    if not response:
        return None
    if set(response) == {"result"}:
        value = response["result"]
        return None if value is None else str(value)
    return json.dumps(response, default=str)


def answer_parts(
    reply: Event,
    answers: dict[str, types.FunctionResponse],
    converter: GenAIPartToA2APartConverter,
) -> list[A2APart]:
    """The user's answers to what the remote waits on: the answer to ADK's stand-in call
    as text, an answer to the remote's own call as that call's function response."""
    names = {call.id: call.name for call in reply.get_function_calls()}
    parts: list[A2APart] = []
    for call_id in sorted(reply.long_running_tool_ids or ()):
        response = answers[call_id]
        if names.get(call_id) in _STAND_IN_CALLS:
            text = rendered_answer(response.response)
            if text is not None:
                parts.append(_mark_user_input(A2APart(text=text)))
            continue
        named = response.model_copy(update={"name": names.get(call_id) or response.name})
        parts += [
            _mark_user_input(p) for p in _converted(types.Part(function_response=named), converter)
        ]
    return parts


def session_context_id(session: Session, setting: bool | Literal["namespaced"]) -> str | None:
    """The context id a first message carries (``forward_session_id_as_context_id``): the
    session's id, a digest of app, user and session (``"namespaced"``), or none."""
    if setting == "namespaced":
        key = "\x1f".join(f"{len(p)}:{p}" for p in (session.app_name, session.user_id, session.id))
        return hashlib.sha256(key.encode("utf-8")).hexdigest()
    return session.id if setting else None
