"""Request bodies (camelCase JSON, snake_case accepted) and the JSON of what routes return."""

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
)
from pydantic.alias_generators import to_camel
from starlette.responses import Response

from cairn.events.event import Event
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


class Body(BaseModel):
    """A request body: camelCase fields (snake_case accepted), unknown fields refused."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class CreateSessionRequest(Body):
    session_id: str | None = None
    state: dict[str, Any] | None = None
    events: list[EventJSON] | None = None


class UpdateSessionRequest(Body):
    state_delta: dict[str, Any]


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


class AnswerInterruptRequest(Body):
    """The answer to one interrupt: an object is sent as the ``FunctionResponse.response``;
    any other JSON value as ``{"result": value}`` (ADK's convention)."""

    response: Any = None
    streaming: bool = False


class RewindRequest(Body):
    invocation_id: str


class ForkRequest(Body):
    up_to_event_id: str | None = None
    new_session_id: str | None = None


class NodeStatus(Body):
    path: str
    name: str
    status: Literal["completed", "waiting", "failed", "running"]


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


def events_response(events: list[Event]) -> Response:
    return RawJSONResponse("[" + ",".join(event.to_json() for event in events) + "]")
