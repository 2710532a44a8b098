"""Running a ``RemoteA2aAgent``'s interceptors (ADK's helpers)."""

from __future__ import annotations

from typing import Any

from a2a.client import ClientCallContext
from a2a.types import Message as A2AMessage

from cairn.a2a.agent.config import CardRequestInterceptor, ParametersConfig, RequestInterceptor
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event


async def execute_before_card_request_interceptors(
    card_request_interceptors: list[CardRequestInterceptor] | None,
    ctx: InvocationContext | None,
) -> dict[str, Any] | None:
    """``{"headers": {...}}`` for the card's fetch, merged in order (later wins); None when
    no interceptor adds a header."""
    headers: dict[str, str] = {}
    if ctx is not None:
        for interceptor in card_request_interceptors or []:
            if interceptor.before_request is None:
                continue
            config = await interceptor.before_request(ctx)
            if config is not None and config.headers:
                headers.update(config.headers)
    return {"headers": headers} if headers else None


async def execute_before_request_interceptors(
    request_interceptors: list[RequestInterceptor] | None,
    ctx: InvocationContext,
    a2a_request: A2AMessage,
) -> tuple[A2AMessage | Event, ParametersConfig]:
    """The message and parameters after every ``before_request`` hook, in order; an Event
    as soon as one answers instead."""
    parameters = ParametersConfig(
        client_call_context=ClientCallContext(state=dict(ctx.session.state))
    )
    for interceptor in request_interceptors or []:
        if interceptor.before_request is None:
            continue
        result, parameters = await interceptor.before_request(ctx, a2a_request, parameters)
        if isinstance(result, Event):
            return result, parameters
        a2a_request = result
    return a2a_request, parameters


async def execute_after_request_interceptors(
    request_interceptors: list[RequestInterceptor] | None,
    ctx: InvocationContext,
    a2a_response: Any,
    event: Event,
) -> Event | None:
    """``event`` after every ``after_request`` hook, last registered first; None once one
    drops it."""
    for interceptor in reversed(request_interceptors or []):
        if interceptor.after_request is None:
            continue
        changed = await interceptor.after_request(ctx, a2a_response, event)
        if changed is None:
            return None
        event = changed
    return event


__all__ = [
    "execute_after_request_interceptors",
    "execute_before_card_request_interceptors",
    "execute_before_request_interceptors",
]
