"""An A2A request as the arguments of a Runner run, as google-adk converts it.

The message's parts become a user ``Content``; the request's metadata travels in the run's
``custom_metadata`` under ``a2a_metadata``. The user is the server-authenticated caller, or
``A2A_USER_<contextId>`` for a caller the server did not authenticate (a name a caller merely
claims is not trusted), and the session is the context.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from a2a import types as a2a_types
from a2a.server.agent_execution import RequestContext
from google.genai import types as genai_types
from pydantic import BaseModel, ConfigDict

from cairn.a2a.converters.part_converter import (
    A2APartToGenAIPartConverter,
    convert_a2a_part_to_genai_part,
)
from cairn.agents.run_config import RunConfig

logger = logging.getLogger(__name__)

A2A_METADATA_KEY = "a2a_metadata"
ANONYMOUS_USER_PREFIX = "A2A_USER_"


class AgentRunRequest(BaseModel):
    """The keyword arguments of ``Runner.run_async`` for one A2A request."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    user_id: str | None = None
    session_id: str | None = None
    invocation_id: str | None = None
    new_message: genai_types.Content | None = None
    state_delta: dict[str, Any] | None = None
    run_config: RunConfig | None = None


A2ARequestToAgentRunRequestConverter = Callable[
    [RequestContext, A2APartToGenAIPartConverter], AgentRunRequest
]


def anonymous_user_id(context_id: str) -> str:
    """The user an unauthenticated caller's conversation runs as (ADK's choice)."""
    return ANONYMOUS_USER_PREFIX + context_id


def convert_a2a_parts_to_content(
    parts: Iterable[a2a_types.Part],
    part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part,
) -> genai_types.Content:
    """A message's parts as a user ``Content`` (parts that convert to nothing are left out)."""
    converted: list[genai_types.Part] = []
    for part in parts:
        result = part_converter(part)
        if isinstance(result, list):
            converted.extend(result)
        elif result is not None:
            converted.append(result)
    if all(type(part) is genai_types.Part for part in converted):
        # Parts of Content's own type: its constructor would validate them and keep them as
        # they are, so the Content is built without it (less than half the cost), the same.
        return genai_types.Content.model_construct(role="user", parts=converted)
    return genai_types.Content(role="user", parts=converted)


def convert_a2a_request_to_agent_run_request(
    request: RequestContext,
    part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part,
) -> AgentRunRequest:
    """The Runner arguments for ``request``; ``ValueError`` for a request with no message."""
    if request.message is None:
        raise ValueError("the A2A request has no message; send one with at least one part")
    custom_metadata: dict[str, Any] = {}
    if request.metadata:
        custom_metadata[A2A_METADATA_KEY] = dict(request.metadata)
    context_id = request.context_id or ""
    user = request.call_context.user if request.call_context is not None else None
    user_id = (
        user.user_name
        if user is not None and user.is_authenticated and user.user_name
        else anonymous_user_id(context_id)
    )
    return AgentRunRequest(
        user_id=user_id,
        session_id=context_id,
        new_message=convert_a2a_parts_to_content(request.message.parts, part_converter),
        run_config=RunConfig(custom_metadata=custom_metadata),
    )
