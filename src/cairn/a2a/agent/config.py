"""The configuration of a ``RemoteA2aAgent`` (ADK's ``A2aRemoteAgentConfig``): how the remote's
answers become events, and hooks around its requests and its card's fetch."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from a2a.client import ClientCallContext
from a2a.types import Message as A2AMessage
from pydantic import BaseModel, ConfigDict

from cairn.a2a.converters.part_converter import (
    A2APartToGenAIPartConverter,
    convert_a2a_part_to_genai_part,
)
from cairn.a2a.converters.to_adk_event import (
    A2AArtifactUpdateToEventConverter,
    A2AMessageToEventConverter,
    A2AStatusUpdateToEventConverter,
    A2ATaskToEventConverter,
    convert_a2a_artifact_update_to_event,
    convert_a2a_message_to_event,
    convert_a2a_status_update_to_event,
    convert_a2a_task_to_event,
)
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event


class ParametersConfig(BaseModel):
    """What goes with one message to the remote: the request's metadata and the SDK's call
    context (its ``service_parameters`` are sent as HTTP headers)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    request_metadata: dict[str, Any] | None = None
    client_call_context: ClientCallContext | None = None


class RequestInterceptor(BaseModel):
    """Hooks around each message to the remote agent.

    ``before_request(ctx, message, parameters)`` returns the message and parameters to send,
    or an ``Event`` to answer with instead (nothing is sent). ``after_request(ctx,
    response, event)`` sees each event made from the remote's answer and returns it,
    changed or not, or None to drop it.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    before_request: (
        Callable[
            [InvocationContext, A2AMessage, ParametersConfig],
            Awaitable[tuple[A2AMessage | Event, ParametersConfig]],
        ]
        | None
    ) = None
    after_request: Callable[[InvocationContext, Any, Event], Awaitable[Event | None]] | None = None


class A2aCardRequestConfig(BaseModel):
    """The HTTP request that fetches a remote agent's card: extra headers (a token, say)."""

    headers: dict[str, str] | None = None


class CardRequestInterceptor(BaseModel):
    """``before_request(ctx)`` returns the ``A2aCardRequestConfig`` for fetching the card in
    this invocation (a card given as an object or a file is not fetched)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    before_request: Callable[[InvocationContext], Awaitable[A2aCardRequestConfig]] | None = None


class A2aRemoteAgentConfig(BaseModel):
    """How a ``RemoteA2aAgent`` turns the remote's answers into events, and its hooks."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    a2a_message_converter: A2AMessageToEventConverter = convert_a2a_message_to_event
    a2a_task_converter: A2ATaskToEventConverter = convert_a2a_task_to_event
    a2a_status_update_converter: A2AStatusUpdateToEventConverter = (
        convert_a2a_status_update_to_event
    )
    a2a_artifact_update_converter: A2AArtifactUpdateToEventConverter = (
        convert_a2a_artifact_update_to_event
    )
    a2a_part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part
    request_interceptors: list[RequestInterceptor] | None = None
    card_request_interceptors: list[CardRequestInterceptor] | None = None
    forward_session_id_as_context_id: bool | Literal["namespaced"] = False
    """The context id of a first message, when the remote has given none yet: ``True``
    sends the local session's id, ``"namespaced"`` a digest of app, user and session (so
    two users' sessions never share a remote context), ``False`` none (the remote picks)."""


__all__ = [
    "A2aCardRequestConfig",
    "A2aRemoteAgentConfig",
    "CardRequestInterceptor",
    "ParametersConfig",
    "RequestInterceptor",
]
