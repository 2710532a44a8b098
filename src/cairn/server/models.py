"""Request bodies (camelCase JSON, snake_case accepted), the JSON of what routes return,
and the ``responses=`` that declare it in the OpenAPI document (errors included)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from google.genai import types
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from starlette.responses import Response

from cairn.agents.run_config import MultitaskStrategy
from cairn.events.event import Event
from cairn.sessions.scopes import stored_form
from cairn.sessions.session import Session


def _contained(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Some google-genai validators raise plain errors on odd input: make them a 422."""
    try:
        return handler(value)
    except ValidationError:
        raise
    except Exception as exc:
        raise ValueError(f"not a valid value ({type(exc).__name__}: {exc})") from exc


def _the_users(message: types.Content) -> types.Content:
    """A new message is the user's (ADK sets its role to ``user``): a client may not send
    another role and so forge the model's turns."""
    if message.role not in (None, "user"):
        raise ValueError(
            f"newMessage.role must be 'user' (or left out): a new message is the user's; "
            f"got {message.role!r}"
        )
    return message


NewMessageJSON = Annotated[types.Content, WrapValidator(_contained), AfterValidator(_the_users)]
EventJSON = Annotated[Event, WrapValidator(_contained)]
PartJSON = Annotated[types.Part, WrapValidator(_contained)]


class Body(BaseModel):
    """A request body: camelCase fields (snake_case accepted), unknown fields refused."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class CreateSessionRequest(Body):
    session_id: str | None = None
    state: dict[str, Any] | None = None
    events: list[EventJSON] | None = None


class UpdateSessionRequest(Body):
    """ADK's body (``stateDelta``, required as in ADK: ``{}`` to only remove), and cairn's
    ``removedStateKeys``: keys (with their scope prefix, as in state) the same event deletes.
    A key may not be in both."""

    state_delta: dict[str, Any]
    removed_state_keys: list[str] | None = None

    @model_validator(mode="after")
    def _set_or_removed(self) -> UpdateSessionRequest:
        both = sorted(set(self.state_delta) & set(self.removed_state_keys or ()))
        if both:
            raise ValueError(
                f"{', '.join(repr(k) for k in both)} cannot be both set (stateDelta) and "
                "removed (removedStateKeys) by one update; send one of the two"
            )
        return self


class RunAgentRequest(Body):
    """ADK's ``RunAgentRequest``: start an invocation with ``newMessage`` (answers to
    interrupts are ``functionResponse`` parts), or continue one with ``invocationId``."""

    app_name: str
    user_id: str
    session_id: str
    new_message: NewMessageJSON | None = None
    streaming: bool = False
    state_delta: dict[str, Any] | None = None
    invocation_id: str | None = None
    custom_metadata: dict[str, Any] | None = None
    multitask_strategy: MultitaskStrategy | None = None
    """cairn's: what to do when the session is busy with another invocation (``enqueue``,
    the default: wait in line; ``reject``: 409 at once; ``interrupt``: stop it and run;
    ``rollback``: stop it, rewind it away and run)."""


class CreateRunRequest(Body):
    """A run to start in the background (``POST .../runs``): ``newMessage`` starts an
    invocation (or answers pending interrupts, continuing theirs), ``invocationId``
    continues one. ``webhook`` is called when it ends or pauses; ``metadata`` is kept as
    given."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"newMessage": {"role": "user", "parts": [{"text": "summarise my inbox"}]}},
                {
                    "newMessage": {"parts": [{"text": "and now the calendar"}]},
                    "multitaskStrategy": "reject",
                    "webhook": "https://example.com/hooks/cairn",
                    "metadata": {"ticket": "T-42"},
                },
            ]
        }
    )
    new_message: NewMessageJSON | None = None
    state_delta: dict[str, Any] | None = None
    invocation_id: str | None = None
    streaming: bool = False
    custom_metadata: dict[str, Any] | None = None
    multitask_strategy: MultitaskStrategy | None = None
    webhook: Annotated[str, Field(max_length=2048, pattern=r"^https?://")] | None = None
    metadata: dict[str, Any] | None = None


class AnswerInterruptRequest(Body):
    """The answer to one interrupt: an object is sent as the ``FunctionResponse.response``;
    any other JSON value as ``{"result": value}`` (ADK's convention)."""

    response: Any = None
    streaming: bool = False


class UploadArtifactRequest(Body):
    """An artifact version to save: ``artifact`` is a ``Part`` with ``text``, or with
    ``inlineData`` (``mimeType`` and base64 ``data``)."""

    filename: Annotated[str, Field(min_length=1, max_length=255)]
    artifact: PartJSON


class RewindRequest(Body):
    invocation_id: str


class ForkRequest(Body):
    up_to_event_id: str | None = None
    new_session_id: str | None = None


RunStatus = Literal["completed", "waiting", "failed", "running"]


class NodeStatus(Body):
    path: str
    name: str
    status: RunStatus


class NodeError(Body):
    """One failed attempt of a node run: its error event."""

    code: str
    message: str | None = None
    timestamp: float
    event_id: str


class NodeRun(Body):
    """One run of a workflow node (``name@N`` at ``path``) as the invocation's log shows it."""

    path: str
    name: str
    status: RunStatus
    input: Any = None
    """The output that triggered the run (the user's text after START), if the log shows it."""
    input_known: bool = False
    output: Any = None
    attempts: int
    """Failed attempts (error events) plus the one that finished or still runs."""
    errors: list[NodeError] = Field(default_factory=list)
    started_at: float
    """When its input was recorded (else its first event)."""
    duration_seconds: float | None = None
    """From ``started_at`` to its last event, once it completed or failed."""
    event_ids: list[str] = Field(default_factory=list)
    """Its events and those of runs nested in it, in log order."""


class GraphNode(Body):
    name: str
    kind: str


class GraphEdge(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_node: str = Field(alias="from")
    to_node: str = Field(alias="to")
    route: Any = None


class WorkflowGraph(Body):
    nodes: list[GraphNode]
    edges: list[GraphEdge]


class AppInfo(Body):
    name: str
    kind: Literal["agent", "workflow"]
    graph: WorkflowGraph | None = None


class Reply(BaseModel):
    """The JSON a route answers: camelCase fields (routes build it; the models declare it)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class ErrorDetail(Reply):
    """A request's error (4xx): cairn's message, naming what was wrong and what to do."""

    detail: str


class ServerError(Reply):
    """A server failure (5xx): a generic detail naming ``errorId``, under which the server's
    log has what happened (the exception's text never reaches the client)."""

    detail: str
    error_id: str


class ValidationIssue(BaseModel):
    """One of FastAPI's validation errors: ``loc`` names the field (``["body", "appName"]``)."""

    loc: list[str | int]
    msg: str
    type: str
    input: Any = None
    ctx: dict[str, Any] | None = None


class InvalidInput(Reply):
    """A 422: FastAPI's validation errors, or cairn's message (an answer that does not fit
    its interrupt, a state value that is not JSON, a bad cursor, ...)."""

    detail: list[ValidationIssue] | str


class ForkedFromJSON(Reply):
    """A fork's parent: its id, whether it still exists, its title, and the last event
    copied from it."""

    session_id: str
    exists: bool
    event_id: str | None = None
    title: str | None = None


class SessionInfoJSON(Reply):
    """What to call a session: ``name`` (given by a user), ``firstMessage`` (its first user
    message), ``title`` (the name, else that message on one shortened line; absent: show the
    id), and ``forkedFrom``."""

    user_id: str
    session_id: str
    name: str | None = None
    first_message: str | None = None
    title: str | None = None
    forked_from: ForkedFromJSON | None = None


class SessionsPage(Reply):
    """A page of sessions (no events), newest first; ``nextCursor`` fetches the next one.
    ``infos`` names each listed session, in the same order."""

    sessions: list[Session]
    infos: list[SessionInfoJSON]
    next_cursor: str | None = None
    total: int


class RenameSessionRequest(Body):
    """The session's new name; null or blank removes it (the session is then called by its
    first message)."""

    name: str | None


class SessionSummary(Reply):
    session: Session
    info: SessionInfoJSON
    initial_state: dict[str, Any]
    event_count: int
    rewound_event_ids: list[str] | None = None


class StateChangeJSON(Reply):
    """A key an event set or removed, with its value just before; ``before`` is absent when
    the key had none, ``after`` when it was removed; ``known`` is false for a shared
    (``app:``/``user:``) key this session had not written."""

    scope: Literal["app", "user", "session"]
    key: str
    known: bool
    had: bool
    removed: bool
    before: Any = None
    after: Any = None


class TimelinePage(Reply):
    """One page of a session's timeline, events in log order."""

    events: list[Event]
    positions: list[int]
    changes: dict[str, list[StateChangeJSON]]
    rewound_event_ids: list[str]
    newer_cursor: str
    older_cursor: str | None = None
    revision: int
    scanned: int


class EventsPage(Reply):
    events: list[Event]
    next_cursor: str | None = None


class StateDifferenceJSON(Reply):
    """A key whose stored value differs from the fold of the log (``cairn verify``)."""

    scope: Literal["app", "user", "session"]
    key: str
    kind: Literal["missing", "unexpected", "different"]
    stored: Any = None
    expected: Any = None
    description: str


class RunningInvocationsJSON(Reply):
    invocation_ids: list[str]


class StoppedInvocation(Reply):
    invocation_id: str
    stopped: bool


RUN_EXAMPLE: dict[str, Any] = {
    "appName": "assistant",
    "userId": "ann",
    "sessionId": "5f0c1e9a",
    "runId": "e-3b1d0c9a-8f2e-4c1b-9a7d-2e6f0b1c4d5e",
    "status": "done",
    "strategy": "enqueue",
    "executor": "in-process",
    "request": {
        "newMessage": {"role": "user", "parts": [{"text": "summarise my inbox"}]},
        "continuing": False,
        "streaming": False,
    },
    "createdAt": 1796600000.25,
    "startedAt": 1796600000.31,
    "endedAt": 1796600004.9,
    "attempts": 1,
    "metadata": {},
}
"""A run as the run routes answer it (the OpenAPI document's example)."""


class RunJSON(Reply):
    """A run: its id (its invocation's), where it is in its lifecycle, how it was asked for
    and how it ended. Times are seconds since the epoch."""

    model_config = ConfigDict(json_schema_extra={"examples": [RUN_EXAMPLE]})

    app_name: str
    user_id: str
    session_id: str
    run_id: str
    status: Literal["pending", "running", "paused", "done", "failed", "cancelled"]
    strategy: str
    executor: str
    """Where it executes: ``in-process`` or ``temporal``."""
    request: dict[str, Any]
    created_at: float
    started_at: float | None = None
    ended_at: float | None = None
    cancel: Literal["cancel", "interrupt", "rollback"] | None = None
    error: dict[str, Any] | None = None
    attempts: int
    webhook: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class RunsPageJSON(Reply):
    """Runs, newest first; ``nextCursor`` reads the next (older) page."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"runs": [RUN_EXAMPLE], "nextCursor": None}]}
    )

    runs: list[RunJSON]
    next_cursor: str | None = None


class ArtifactVersionJSON(Reply):
    """A version's number, time, type and metadata (its canonical URI, which may name a
    server path, is not sent)."""

    version: int
    create_time: float
    mime_type: str | None = None
    custom_metadata: dict[str, Any] = Field(default_factory=dict)


class ArtifactListing(Reply):
    filename: str
    scope: Literal["session", "user"]
    versions: list[ArtifactVersionJSON]


class ArtifactUpload(Reply):
    filename: str
    version: int
    event_id: str


class VerifyReport(Reply):
    ok: bool
    differences: list[StateDifferenceJSON]


Responses = dict[int | str, dict[str, Any]]

_ERRORS: Responses = {
    400: {"model": ErrorDetail, "description": "The body cannot be read (not UTF-8 JSON)"},
    404: {"model": ErrorDetail, "description": "What the path names does not exist"},
    409: {
        "model": ErrorDetail,
        "description": "The id is taken, the session is busy (retry), or nothing is pending",
    },
    413: {"model": ErrorDetail, "description": "The body is larger than the server's limit"},
    422: {"model": InvalidInput, "description": "Invalid input"},
    500: {"model": ServerError, "description": "The server failed; its log has the error id"},
    503: {
        "model": ServerError,
        "description": "The store or the run executor cannot be reached; retry later",
    },
}


def errors(*statuses: int) -> Responses:
    """``responses=`` declaring these error statuses, each with its typed body."""
    return {status: _ERRORS[status] for status in statuses}


SERVER_ERRORS = errors(500, 503)
"""What any route may answer (a router's ``responses=``)."""


def ok(model: Any, *statuses: int) -> Responses:
    """``responses=`` of a route whose 200 is ``model``'s JSON, and these error statuses.
    The route builds that JSON itself (``response_model=None``), so it is not re-validated."""
    return {200: {"model": model, "description": "Success"}, **errors(*statuses)}


def streams(*statuses: int) -> Responses:
    """``responses=`` of a route that answers server-sent events, and these error statuses."""
    event = {
        "type": "object",
        "properties": {
            "data": {
                "type": "string",
                "contentMediaType": "application/json",
                "description": "An Event's JSON, as committed; a failure ends the stream with "
                '`{"error": "...", "errorId"?: "..."}`',
            },
            "event": {"type": "string"},
        },
        "required": ["data"],
    }
    sse = {"schema": event}
    return {200: {"content": {"text/event-stream": sse}}, **errors(*statuses)}


def camel(model: BaseModel) -> Any:
    """A model's JSON data: camelCase, ``None`` fields left out (empty maps kept)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def session_json(session: Session, *, events: bool = True) -> Any:
    data = camel(session)
    if not events:
        data["events"] = []
    return data


class RawJSONResponse(Response):
    """JSON already encoded (events' own lossless ``to_json``)."""

    media_type = "application/json"


def wire_json(event: Event) -> str:
    """An event as clients get it: without ``temp:`` state keys (they are this invocation's
    scratch, never stored; ADK's server does not send them either)."""
    return stored_form(event).to_json()


def events_response(events: list[Event]) -> Response:
    return RawJSONResponse("[" + ",".join(wire_json(event) for event in events) + "]")
