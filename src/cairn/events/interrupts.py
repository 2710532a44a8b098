"""Every pause is one function call whose id is in ``long_running_tool_ids``.

Kinds, by the call's name:

- ``adk_request_input``: a workflow node asked for input (``RequestInput``).
- ``adk_request_confirmation``: a tool call waits for a human's approval.
- ``adk_request_credential``: a tool call waits for a credential (API key, token, OAuth).
- ``cairn_resolve_in_doubt``: a tool call started but its result was never
  recorded (the process died); the caller supplies the result or approves a re-run.
- anything else: a long-running tool's own call, answered with its result.

A code run of an agent's code executor is a side effect like a tool call: its
``executable_code`` part (id ``cairn-code-...``) is committed before it runs and its
``code_execution_result`` (same id) after; an interrupt about a run names it as the call
``cairn_code_execution(code=...)`` with the part's id.

An interrupt is pending until a ``FunctionResponse`` with its id is in the log. A
long-running tool that returns something when called (``{"status": "pending"}``) gives
an intermediate result, as in ADK: the model sees it and the invocation goes on, but the
call stays open until the client sends its final response (see ``needs_users_answer``).
A call waiting for a confirmation has, as in ADK, a placeholder response
(``AWAITING_CONFIRMATION``, or what a tool that asked itself returned) in an event
whose ``requested_tool_confirmations`` names the call: that is not its result.
This module only reads events; agents create interrupts, the Runner checks answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from google.genai import types
from pydantic import Field

from cairn.events._base import CamelModel
from cairn.events.event import Event
from cairn.events.request_input import REQUEST_INPUT_FUNCTION

REQUEST_CONFIRMATION_FUNCTION = "adk_request_confirmation"
REQUEST_CREDENTIAL_FUNCTION = "adk_request_credential"
RESOLVE_IN_DOUBT_FUNCTION = "cairn_resolve_in_doubt"

CODE_EXECUTION_FUNCTION = "cairn_code_execution"
"""The name an interrupt gives a code run it is about (the call's args hold the code)."""
CODE_RUN_ID_PREFIX = "cairn-code-"
"""The id prefix of code that an agent's code executor runs (not code a model ran itself)."""

PROTOCOL_FUNCTIONS = frozenset(
    {REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION, RESOLVE_IN_DOUBT_FUNCTION}
)
"""Calls that ask about another call; a model never sees them or their answers."""

A2A_SEND_MESSAGE_FUNCTION = "cairn_a2a_send_message"
"""A ``RemoteA2aAgent``'s record of a message it sends a remote A2A agent (``cairn.a2a``)."""
A2A_AWAIT_TASK_FUNCTION = "cairn_a2a_await_task"
"""A ``RemoteA2aAgent``'s record of its wait for the remote task its message made."""
RECORD_FUNCTIONS = frozenset({A2A_SEND_MESSAGE_FUNCTION, A2A_AWAIT_TASK_FUNCTION})
"""Calls that record a side effect of the runtime itself, as a tool call is recorded: committed
before it, answered after it. A model never sees them; one without an answer means the
invocation stopped during it (``interrupted``, then in doubt on resume). The caller of
``Runner.run_async`` is not given their events (``is_record_event``)."""
_RECORD_PART_FIELDS = frozenset({"function_call", "function_response"})

AWAITING_CONFIRMATION = {"error": "This tool call requires confirmation, please approve or reject."}
"""The response a call gets while it waits for a confirmation (ADK's words): a placeholder
in the log, which neither answers the call nor reaches the model."""

InterruptKind = Literal[
    "input", "confirmation", "credential", "in_doubt", "long_running", "interrupted"
]

_KINDS: dict[str, InterruptKind] = {
    REQUEST_INPUT_FUNCTION: "input",
    REQUEST_CONFIRMATION_FUNCTION: "confirmation",
    REQUEST_CREDENTIAL_FUNCTION: "credential",
    RESOLVE_IN_DOUBT_FUNCTION: "in_doubt",
}


class Interrupt(CamelModel):
    """One pending pause: what is asked, and how to answer it.

    Answer with ``FunctionResponse(id=interrupt.id, name=interrupt.name,
    response=...)`` in a ``run_async`` message:

    - ``input``: the answer itself (or ``{"result": answer}``); it must match
      ``response_schema`` if one is given.
    - ``confirmation``: ``{"confirmed": true|false, "payload": ...}``.
    - ``credential``: the auth config with the credential filled in (see ``cairn.auth``).
      The request's config carries no secret, and the answer is stored without its
      secrets (``cairn.auth.without_secrets``).
    - ``in_doubt``: ``{"rerun": true}`` to run the tool again, or ``{"result": ...}``
      to record what it returned.
    - ``long_running``: the tool's result.

    ``interrupted`` is not answered: an invocation stopped in the middle of a
    tool call (its process died). Continue it with
    ``run_async(invocation_id=interrupt.invocation_id)``; it then re-runs the
    calls of idempotent tools and asks about the others (``in_doubt``).
    """

    id: str
    kind: InterruptKind
    name: str
    """The function name to answer with."""
    invocation_id: str
    author: str
    branch: str | None = None
    node_path: str = ""
    message: str | None = None
    """What a human is asked (an input request's message, a confirmation's hint, ...)."""
    payload: Any = None
    response_schema: dict[str, Any] | None = None
    function_call: types.FunctionCall | None = None
    """The call this interrupt is about (confirmation, credential, in doubt), or its own call."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The interrupt call's arguments as stored."""
    event_id: str
    timestamp: float


def is_record_event(event: Event) -> bool:
    """Whether ``event`` only records a side effect of the runtime: its content has parts,
    and each is a call of one of ``RECORD_FUNCTIONS`` or a response to one, holding nothing
    else. Such an event is committed to the log (resume and the in-doubt rule read it) but
    not given to the invocation's caller, as google-adk yields nothing like it. An event with
    any other part is given whole (``cairn.a2a.agent.exchanges`` makes none)."""
    parts = event.content.parts if event.content is not None else None
    if not parts:
        return False
    for part in parts:
        named = part.function_call or part.function_response
        if named is None or named.name not in RECORD_FUNCTIONS:
            return False
        if part.model_dump(exclude_none=True).keys() - _RECORD_PART_FIELDS:
            return False
    return True


def interrupt_calls(event: Event) -> list[types.FunctionCall]:
    """The calls of ``event`` that pause its invocation (ids in ``long_running_tool_ids``)."""
    waiting = event.long_running_tool_ids
    if not waiting:
        return []
    return [call for call in event.get_function_calls() if call.id in waiting]


def describe(event: Event, call: types.FunctionCall) -> Interrupt:
    """The interrupt that ``call`` (one of ``interrupt_calls(event)``) stands for."""
    name = call.name or ""
    args = dict(call.args or {})
    kind = _KINDS.get(name, "long_running")
    message: str | None = None
    payload: Any = None
    schema: dict[str, Any] | None = None
    about: types.FunctionCall | None = call
    if kind == "input":
        message, payload = args.get("message"), args.get("payload")
        schema = args.get("response_schema", args.get("responseSchema"))
    elif kind == "confirmation":
        confirmation = args.get("toolConfirmation") or {}
        message, payload = confirmation.get("hint") or None, confirmation.get("payload")
        about = _call(args.get("originalFunctionCall"))
        schema = CONFIRMATION_SCHEMA
    elif kind == "credential":
        message = args.get("message")
        about = _call(args.get("originalFunctionCall"))
        payload = args.get("authConfig")
    elif kind == "in_doubt":
        message = args.get("message")
        about = _call(args.get("originalFunctionCall"))
        schema = IN_DOUBT_SCHEMA
    return Interrupt(
        id=call.id or "",
        kind=kind,
        name=name,
        invocation_id=event.invocation_id,
        author=event.author,
        branch=event.branch,
        node_path=event.node_info.path,
        message=message,
        payload=payload,
        response_schema=schema,
        function_call=about,
        args=args,
        event_id=event.id,
        timestamp=event.timestamp,
    )


def _call(value: Any) -> types.FunctionCall | None:
    if isinstance(value, types.FunctionCall):
        return value
    if isinstance(value, dict):
        return types.FunctionCall.model_validate(value)
    return None


def awaiting_confirmation(event: Event) -> set[str]:
    """Ids of the calls whose responses in ``event`` are placeholders: the call waits for a
    confirmation (its id is in the event's ``requested_tool_confirmations``), so it has no
    result yet; its result comes in a later event, once the confirmation is answered."""
    held = event.actions.requested_tool_confirmations
    if not held:
        return set()
    return {r.id for r in event.get_function_responses() if r.id and r.id in held}


def needs_users_answer(call_name: str | None) -> bool:
    """Whether only the user's (client's) response closes the interrupt of a call named so.

    True for a long-running tool's own call: what the tool returned when it was called is
    an intermediate result (written by the agent), and the call stays open for the final
    one, as in ADK. The other kinds are answered by any response with their id.
    """
    return _KINDS.get(call_name or "") is None


def answered_ids(events: Iterable[Event], invocation_id: str | None = None) -> set[str]:
    """Ids of the function responses in ``events``; with ``invocation_id``, of that
    invocation's only (an answer belongs to the invocation it resumes, so a later
    invocation reusing a call id is not answered by an earlier answer)."""
    return {
        r.id
        for event in events
        if invocation_id is None or event.invocation_id == invocation_id
        for r in event.get_function_responses()
        if r.id
    }


def pending_interrupts(events: Sequence[Event]) -> list[Interrupt]:
    """Interrupts in ``events`` with no answer yet, and interrupted invocations, oldest first.

    An interrupt is answered by a response with its id in its own invocation: two
    invocations of a session may use one id (a fixed ``interrupt_id``, a model's call ids).
    """
    answered: dict[str, set[str]] = {}
    by_user: dict[str, set[str]] = {}
    for event in events:
        ids = [r.id for r in event.get_function_responses() if r.id]
        if ids:
            answered.setdefault(event.invocation_id, set()).update(ids)
            if event.author == "user":
                by_user.setdefault(event.invocation_id, set()).update(ids)
    found = [
        describe(event, call)
        for event in events
        for call in interrupt_calls(event)
        if call.id
        not in (by_user if needs_users_answer(call.name) else answered).get(
            event.invocation_id, set()
        )
    ]
    last_of: dict[str, Event] = {}
    for event in events:
        last_of[event.invocation_id] = event
    for event in last_of.values():
        found.extend(interrupted_calls(event, answered.get(event.invocation_id, set())))
    found.sort(key=lambda interrupt: interrupt.timestamp)
    return found


def waiting_under(events: Sequence[Event], invocation_id: str, branch: str | None) -> bool:
    """Whether an interrupt of ``invocation_id`` on ``branch`` (or below it) is unanswered.

    Reads back from the newest event to the message that started the invocation.
    """
    answered: set[str] = set()
    for event in reversed(events):
        if event.invocation_id != invocation_id:
            continue
        inside = branch is None or (
            event.branch is not None
            and (event.branch == branch or event.branch.startswith(branch + "."))
        )
        if inside and any(call.id not in answered for call in interrupt_calls(event)):
            return True
        answered.update(r.id for r in event.get_function_responses() if r.id)
        if starts_invocation(event):
            return False
    return False


def earlier_call(events: Sequence[Event], invocation_id: str, call_id: str) -> Event | None:
    """The event of ``invocation_id`` that made a call with id ``call_id`` already, if any.

    Reads back from the newest event to the message that started the invocation.
    """
    for event in reversed(events):
        if event.invocation_id != invocation_id:
            continue
        if any(call.id == call_id for call in event.get_function_calls()):
            return event
        if starts_invocation(event):
            return None
    return None


def code_runs(event: Event) -> list[types.ExecutableCode]:
    """The code runs ``event`` records (code an agent's executor runs), in order."""
    parts = event.content.parts if event.content and event.content.parts else []
    return [
        part.executable_code
        for part in parts
        if part.executable_code is not None
        and (part.executable_code.id or "").startswith(CODE_RUN_ID_PREFIX)
    ]


def code_results(event: Event) -> set[str]:
    """Ids of the code-run results ``event`` records."""
    parts = event.content.parts if event.content and event.content.parts else []
    return {
        part.code_execution_result.id
        for part in parts
        if part.code_execution_result is not None and part.code_execution_result.id
    }


def code_run_call(code: types.ExecutableCode) -> types.FunctionCall:
    """A code run as the call an interrupt is about."""
    return types.FunctionCall(
        id=code.id, name=CODE_EXECUTION_FUNCTION, args={"code": code.code or ""}
    )


def starts_invocation(event: Event) -> bool:
    """The user's message that started its invocation (not a later answer to a call, nor a
    workflow node's input, which is on the node's path)."""
    return (
        event.author == "user"
        and event.content is not None
        and not event.node_info.path
        and not event.get_function_responses()
    )


def interrupted_calls(last: Event, answered: set[str]) -> list[Interrupt]:
    """Calls an invocation was running when it stopped, given its last event.

    A model turn's calls are always followed by their results (or an interrupt,
    or a sub-agent's input) in the same invocation, and a code run by its result, so a
    last event that is a turn with unanswered, ordinary calls or a code run without
    result means the process died mid-call.
    """
    waiting = last.long_running_tool_ids or set()
    done = code_results(last)
    calls = [
        call
        for call in last.get_function_calls()
        if call.id
        and call.id not in answered
        and call.id not in waiting
        and call.name not in PROTOCOL_FUNCTIONS
        and call.name != REQUEST_INPUT_FUNCTION
    ]
    calls += [code_run_call(code) for code in code_runs(last) if code.id not in done]
    if last.author == "user":
        return []
    return [
        Interrupt(
            id=call.id or "",
            kind="interrupted",
            name=call.name or "",
            invocation_id=last.invocation_id,
            author=last.author,
            branch=last.branch,
            node_path=last.node_info.path,
            message=f"invocation {last.invocation_id!r} stopped while calling "
            f"{call.name}(...); continue it with run_async(invocation_id="
            f"{last.invocation_id!r}) to re-run idempotent calls and decide about the others",
            function_call=call,
            args=dict(call.args or {}),
            event_id=last.id,
            timestamp=last.timestamp,
        )
        for call in calls
    ]


CONFIRMATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"confirmed": {"type": "boolean"}, "payload": {}},
    "required": ["confirmed"],
}
IN_DOUBT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "oneOf": [
        {"properties": {"rerun": {"const": True}}, "required": ["rerun"]},
        {"required": ["result"]},
    ],
}


def unwrap_answer(response: Any) -> Any:
    """ADK's convention: ``{"result": x}`` means x."""
    if isinstance(response, dict) and set(response) == {"result"}:
        return response["result"]
    return response


def schema_problem(schema: dict[str, Any] | None, value: Any) -> str | None:
    """Why ``value`` does not match the JSON ``schema`` (None if it does, or no schema)."""
    if schema is None:
        return None
    import jsonschema  # here, not at the top: only an answer to a schema'd pause needs it

    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(value)
    )
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(the answer)"
    return f"{where}: {error.message}"
