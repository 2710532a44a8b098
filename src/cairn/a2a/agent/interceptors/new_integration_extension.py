"""The interceptor ``RemoteA2aAgent(use_legacy=False)`` adds: it asks the remote for ADK's
newer A2A integration by naming its extension in the ``A2A-Extensions`` header."""

from __future__ import annotations

from a2a.client import ClientCallContext
from a2a.extensions.common import HTTP_EXTENSION_HEADER
from a2a.types import Message as A2AMessage

from cairn.a2a.agent.config import ParametersConfig, RequestInterceptor
from cairn.agents.invocation_context import InvocationContext
from cairn.events.event import Event

NEW_INTEGRATION_EXTENSION = "https://google.github.io/adk-docs/a2a/a2a-extension/"


async def _ask_for_the_extension(
    ctx: InvocationContext, a2a_request: A2AMessage, parameters: ParametersConfig
) -> tuple[A2AMessage | Event, ParametersConfig]:
    call_context = parameters.client_call_context or ClientCallContext()
    headers = dict(call_context.service_parameters or {})
    named = [uri for uri in headers.get(HTTP_EXTENSION_HEADER, "").split(",") if uri]
    if NEW_INTEGRATION_EXTENSION not in named:
        named.append(NEW_INTEGRATION_EXTENSION)
    headers[HTTP_EXTENSION_HEADER] = ",".join(named)
    call_context.service_parameters = headers
    parameters.client_call_context = call_context
    return a2a_request, parameters


new_integration_extension_interceptor = RequestInterceptor(before_request=_ask_for_the_extension)
