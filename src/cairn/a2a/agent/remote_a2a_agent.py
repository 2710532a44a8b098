"""RemoteA2aAgent: an agent that runs elsewhere and is reached over A2A, used as a sub-agent or
wrapped as a tool (``AgentTool(agent=RemoteA2aAgent(...))``), with ADK's names and arguments.

Each turn it sends the remote agent the conversation since the remote's last reply (in the
remote's context, whose id that reply gave), through the a2a-sdk client over the transport
the remote's card offers (JSON-RPC or HTTP+JSON), streaming when the card says so. What the
remote answers is recorded as this agent's events. A remote task that waits for input
(``input-required``, ``auth-required``) pauses the local invocation on an interrupt; its
answer goes to the same remote task. The call itself is recorded like a tool call
(``cairn.a2a.agent.exchanges``), so a crash between the send and the answer is settled by
the in-doubt rule, never by sending twice (``cairn.a2a.agent.delivery``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any, Literal, Self

import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.types import AgentCard, Role
from a2a.types import Message as A2AMessage
from a2a.types import Part as A2APart
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH, TransportProtocol
from a2a.utils.errors import A2AError
from pydantic import PrivateAttr, field_validator

from cairn.a2a.agent.card_resolution import (
    adopted_description,
    check_card,
    fetch_card,
    is_url,
    read_card_file,
)
from cairn.a2a.agent.config import A2aRemoteAgentConfig, ParametersConfig
from cairn.a2a.agent.delivery import Delivery, recorded_message
from cairn.a2a.agent.errors import A2AClientError, AgentCardResolutionError
from cairn.a2a.agent.exchanges import A2A_METADATA_PREFIX, CONTEXT_ID, TASK_ID, Standing, standing
from cairn.a2a.agent.interceptors.new_integration_extension import (
    new_integration_extension_interceptor,
)
from cairn.a2a.agent.outgoing import answer_parts, conversation_parts, session_context_id
from cairn.a2a.agent.utils import (
    execute_before_card_request_interceptors,
    execute_before_request_interceptors,
)
from cairn.a2a.converters.part_converter import (
    A2APartToGenAIPartConverter,
    GenAIPartToA2APartConverter,
    convert_a2a_part_to_genai_part,
    convert_genai_part_to_a2a_part,
)
from cairn.agents.base_agent import BaseAgent
from cairn.agents.invocation_context import InvocationContext
from cairn.auth.auth_credential import AuthCredential
from cairn.auth.auth_schemes import APIKey, APIKeyIn, HTTPBase
from cairn.errors import InputValidationError
from cairn.events.event import Event

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 600.0
"""Seconds an HTTP request to the remote may take (the agent's own HTTP client)."""

_BINDINGS = [TransportProtocol.JSONRPC, TransportProtocol.HTTP_JSON]

ContextBuilder = Callable[
    [InvocationContext, str, GenAIPartToA2APartConverter], tuple[list[A2APart], str | None]
]


def _static_auth_headers(scheme: Any, credential: AuthCredential | None) -> dict[str, str]:
    """The headers an API key or bearer token in ``credential`` adds to every request."""
    if scheme is None:
        return {}
    if credential is None:
        raise ValueError(
            "RemoteA2aAgent(auth_scheme=...) also needs auth_credential=... holding the key or "
            "token (cairn sends a static credential; for a sign-in flow, add the header in a "
            "RequestInterceptor)"
        )
    if isinstance(scheme, APIKey) and credential.api_key:
        if scheme.in_ != APIKeyIn.header:
            raise ValueError(
                f"RemoteA2aAgent: an API key in the {scheme.in_.value} is not supported; put it in "
                "a header (APIKey(in_='header', name=...))"
            )
        return {scheme.name: credential.api_key}
    token = None
    if credential.http is not None and credential.http.credentials.token:
        token = credential.http.credentials.token
    elif credential.oauth2 is not None and credential.oauth2.access_token:
        token = credential.oauth2.access_token
    if token and (not isinstance(scheme, HTTPBase) or scheme.scheme.lower() == "bearer"):
        return {"Authorization": f"Bearer {token}"}
    raise ValueError(
        "RemoteA2aAgent: auth_scheme/auth_credential must be an API key in a header or a "
        "bearer token (an HTTP bearer credential, or an OAuth2 credential with its "
        "access_token); for other schemes, add the header in a RequestInterceptor"
    )


def task_mode_refusal(name: str | None) -> str:
    """Why ``mode="task"`` is refused, and what gives the same result in cairn."""
    agent = f"RemoteA2aAgent {name!r}" if name else "RemoteA2aAgent"
    return (
        f"{agent}: mode='task' is not supported. In google-adk it makes the remote a task "
        "that a parent LlmAgent delegates with a function call and gets back when the remote "
        "calls finish_task; cairn delegates tasks only to LlmAgent sub-agents. For the same "
        "result, leave mode unset and give the parent "
        "tools=[AgentTool(agent=RemoteA2aAgent(...))]: its model calls the remote with a "
        "request and gets the remote's answer as the call's result, and a remote that asks "
        "for input pauses the invocation on an interrupt, answered like any other. To hand "
        "the conversation over instead, list it in sub_agents (transfer_to_agent)."
    )


@dataclasses.dataclass(frozen=True)
class _Hooks:
    """The functions a RemoteA2aAgent was given (kept together: a pydantic private attribute
    holding a plain function would hand it back bound to the agent)."""

    genai_part_converter: GenAIPartToA2APartConverter = convert_genai_part_to_a2a_part
    a2a_part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part
    meta_provider: Callable[[InvocationContext, A2AMessage], dict[str, Any]] | None = None
    context_builder: ContextBuilder | None = None


class RemoteA2aAgent(BaseAgent):
    """An agent served elsewhere over A2A, known by its agent card (an ``AgentCard``, the
    card's URL, or a JSON file).

    Session state stays on each side: only the conversation's content is sent, and the
    remote's state changes do not reach this session. Pass values the remote needs in the
    conversation, and read what it returns from its answer.
    """

    mode: Literal["task"] | None = None
    """ADK's task delegation mode; refused (``task_mode_refusal`` says what to use instead)."""

    _card: AgentCard | None = PrivateAttr(default=None)
    _card_source: str | None = PrivateAttr(default=None)
    _given_http: httpx.AsyncClient | None = PrivateAttr(default=None)
    _own_http: httpx.AsyncClient | None = PrivateAttr(default=None)
    _own_loop: asyncio.AbstractEventLoop | None = PrivateAttr(default=None)
    _client: Client | None = PrivateAttr(default=None)
    _client_loop: asyncio.AbstractEventLoop | None = PrivateAttr(default=None)
    _factory: ClientFactory | None = PrivateAttr(default=None)
    _timeout: float = PrivateAttr(default=DEFAULT_TIMEOUT)
    _hooks: _Hooks = PrivateAttr(default_factory=lambda: _Hooks())
    _config: A2aRemoteAgentConfig = PrivateAttr(default_factory=A2aRemoteAgentConfig)
    _auth_headers: dict[str, str] = PrivateAttr(default_factory=dict)
    _arguments: dict[str, Any] = PrivateAttr(default_factory=dict)

    def __init__(
        self,
        name: str,
        agent_card: AgentCard | str,
        *,
        description: str = "",
        httpx_client: httpx.AsyncClient | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        genai_part_converter: GenAIPartToA2APartConverter = convert_genai_part_to_a2a_part,
        a2a_part_converter: A2APartToGenAIPartConverter = convert_a2a_part_to_genai_part,
        a2a_client_factory: ClientFactory | None = None,
        a2a_request_meta_provider: (
            Callable[[InvocationContext, A2AMessage], dict[str, Any]] | None
        ) = None,
        full_history_when_stateless: bool = False,
        context_builder: ContextBuilder | None = None,
        config: A2aRemoteAgentConfig | None = None,
        use_legacy: bool = True,
        auth_scheme: Any = None,
        auth_credential: AuthCredential | None = None,
        credential_key: str | None = None,
        **kwargs: Any,
    ) -> None:
        """``agent_card``: an ``AgentCard``, the URL of the card (or of the agent's host,
        whose card is at ``/.well-known/agent-card.json``), or a JSON file's path.
        ``description`` defaults to the card's. ``httpx_client``: a client of yours (never
        closed by the agent); otherwise the agent makes its own, with ``timeout``, and
        closes it in ``cleanup()`` (``Runner.close()`` calls it). ``config``: how answers
        become events, and request hooks. ``auth_scheme``/``auth_credential``: a static API
        key (in a header) or bearer token, sent with the card's fetch and every request.
        """
        if kwargs.get("mode") is not None:
            raise InputValidationError(task_mode_refusal(name))
        super().__init__(name=name, description=description, **kwargs)
        self._arguments = {
            "name": name,
            "agent_card": agent_card,
            "description": description,
            "httpx_client": httpx_client,
            "timeout": timeout,
            "genai_part_converter": genai_part_converter,
            "a2a_part_converter": a2a_part_converter,
            "a2a_client_factory": a2a_client_factory,
            "a2a_request_meta_provider": a2a_request_meta_provider,
            "full_history_when_stateless": full_history_when_stateless,
            "context_builder": context_builder,
            "config": config,
            "use_legacy": use_legacy,
            "auth_scheme": auth_scheme,
            "auth_credential": auth_credential,
            "credential_key": credential_key,
            **kwargs,
        }
        if isinstance(agent_card, AgentCard):
            self._card = agent_card
            if not self.description:
                self.description = adopted_description(agent_card)
        elif isinstance(agent_card, str) and agent_card.strip():
            self._card_source = agent_card.strip()
        elif isinstance(agent_card, str):
            raise ValueError(
                f"RemoteA2aAgent {name!r}: agent_card is empty; give the card's URL, a JSON "
                "file's path, or an AgentCard"
            )
        else:
            raise TypeError(
                f"RemoteA2aAgent {name!r}: agent_card must be an a2a.types.AgentCard, a URL or "
                f"a file path; got {type(agent_card).__name__}"
            )
        if timeout <= 0:
            raise ValueError(f"RemoteA2aAgent {name!r}: timeout must be positive seconds")
        self._given_http = httpx_client
        self._factory = a2a_client_factory
        self._timeout = timeout
        chosen = config or A2aRemoteAgentConfig()
        if a2a_part_converter is not convert_a2a_part_to_genai_part:
            chosen = chosen.model_copy(update={"a2a_part_converter": a2a_part_converter})
        if not use_legacy:
            chosen = chosen.model_copy(
                update={
                    "request_interceptors": [
                        *(chosen.request_interceptors or []),
                        new_integration_extension_interceptor,
                    ]
                }
            )
        self._config = chosen
        self._hooks = _Hooks(
            genai_part_converter,
            chosen.a2a_part_converter,
            a2a_request_meta_provider,
            context_builder,
        )
        self._full_history_when_stateless = full_history_when_stateless
        self._auth_headers = _static_auth_headers(auth_scheme, auth_credential)

    @field_validator("mode")
    @classmethod
    def _no_task_mode(cls, mode: str | None) -> str | None:
        if mode is not None:
            raise ValueError(task_mode_refusal(None))
        return mode

    # -- what others read -------------------------------------------------------------------
    @property
    def config(self) -> A2aRemoteAgentConfig:
        return self._config

    @property
    def a2a_part_converter(self) -> A2APartToGenAIPartConverter:
        return self._hooks.a2a_part_converter

    @property
    def timeout(self) -> float:
        return self._timeout

    def clone(self, update: Mapping[str, Any] | None = None) -> Self:
        """A copy made with the same arguments (``update`` replaces some), sharing no client."""
        changes = dict(update or {})
        if "parent_agent" in changes:
            raise ValueError("Cannot update `parent_agent` field in clone")
        return type(self)(**{**self._arguments, **changes})

    # -- running -----------------------------------------------------------------------------
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        now = standing(ctx, self.name)
        if now.kind in ("waiting", "done"):
            return  # it waits for an answer, or it answered already in this run
        try:
            client, card = await self._connect(ctx)
        except AgentCardResolutionError as error:
            yield self._failure(ctx, "AgentCardResolutionError", str(error))
            return
        if now.kind == "open":
            assert now.call is not None
            _, parameters = await self._prepared(ctx, recorded_message(now.call))
            delivery = Delivery(self, ctx, client, card, parameters)
            async for event in delivery.settle(now):
                yield event
            return
        message = self._message(ctx, now)
        if message is None:
            logger.warning(
                "remote agent %r: nothing to send (no conversation since its last turn)", self.name
            )
            yield Event(invocation_id=ctx.invocation_id, author=self.name, branch=ctx.branch)
            return
        intercepted, parameters = await self._prepared(ctx, message)
        if isinstance(intercepted, Event):
            yield intercepted  # an interceptor answered instead; nothing is sent
            return
        delivery = Delivery(self, ctx, client, card, parameters)
        async for event in delivery.send(intercepted):
            yield event

    def _message(self, ctx: InvocationContext, now: Standing) -> A2AMessage | None:
        """What to send: the user's answers to the remote's waiting task, or the conversation
        since the remote's last reply."""
        task_id: str | None = None
        if now.kind == "answered" and now.reply is not None:
            parts = answer_parts(now.reply, now.answers, self._hooks.genai_part_converter)
            metadata = now.reply.custom_metadata or {}
            task_id = metadata.get(TASK_ID)
            context_id = metadata.get(CONTEXT_ID)
        elif self._hooks.context_builder is not None:
            parts, context_id = self._hooks.context_builder(
                ctx, self.name, self._hooks.genai_part_converter
            )
        else:
            parts, context_id = conversation_parts(
                ctx,
                self.name,
                self._hooks.genai_part_converter,
                full_history_when_stateless=self._full_history_when_stateless,
            )
        if not parts:
            return None
        context_id = context_id or session_context_id(
            ctx.session, self._config.forward_session_id_as_context_id
        )
        return A2AMessage(
            message_id=str(uuid.uuid4()),
            role=Role.ROLE_USER,
            parts=parts,
            context_id=context_id or "",
            task_id=task_id or "",
        )

    async def _prepared(
        self, ctx: InvocationContext, message: A2AMessage
    ) -> tuple[A2AMessage | Event, ParametersConfig]:
        """The message after the request hooks, and what goes with it: the hooks' call
        context, the credential's headers, ``a2a_request_meta_provider``'s metadata. A
        message sent again is the one recorded; only what goes with it is made again."""
        intercepted, parameters = await execute_before_request_interceptors(
            self._config.request_interceptors, ctx, message
        )
        self._add_request_headers(parameters)
        if isinstance(intercepted, A2AMessage) and self._hooks.meta_provider is not None:
            parameters.request_metadata = self._hooks.meta_provider(ctx, intercepted)
        return intercepted, parameters

    def _add_request_headers(self, parameters: ParametersConfig) -> None:
        if not self._auth_headers:
            return
        from a2a.client import ClientCallContext

        context = parameters.client_call_context or ClientCallContext()
        context.service_parameters = {**(context.service_parameters or {}), **self._auth_headers}
        parameters.client_call_context = context

    def _failure(self, ctx: InvocationContext, code: str, message: str) -> Event:
        return Event(
            invocation_id=ctx.invocation_id,
            author=self.name,
            branch=ctx.branch,
            error_code=code,
            error_message=message,
            custom_metadata={A2A_METADATA_PREFIX + "error": message},
        )

    # -- the card and the client -------------------------------------------------------------
    def _per_invocation_card(self) -> bool:
        """A card fetched with hooks (an authenticated card) is fetched for each invocation."""
        source = self._card_source
        return bool(self._config.card_request_interceptors and source and is_url(source))

    async def _connect(self, ctx: InvocationContext) -> tuple[Client, AgentCard]:
        loop = asyncio.get_running_loop()
        fresh = self._per_invocation_card()
        reuse = self._client is not None and self._card is not None and not fresh
        if reuse and self._client_loop is loop:
            assert self._client is not None and self._card is not None
            return self._client, self._card
        card = await self._resolve_card(ctx, fresh)
        try:
            client = self._client_factory().create(card)
        except ValueError as error:
            offered = ", ".join(i.protocol_binding for i in card.supported_interfaces)
            raise AgentCardResolutionError(
                f"remote agent {self.name!r}: its card offers no transport this client speaks "
                f"({error}); it offers {offered or 'none'}, the client speaks "
                f"{', '.join(_BINDINGS)}"
            ) from error
        if not fresh:
            self._client, self._client_loop, self._card = client, loop, card
        return client, card

    async def _resolve_card(self, ctx: InvocationContext, fresh: bool) -> AgentCard:
        if self._card is not None and not fresh:
            card = self._card
        elif self._card_source is not None and is_url(self._card_source):
            http_kwargs = (
                await execute_before_card_request_interceptors(
                    self._config.card_request_interceptors, ctx
                )
                or {}
            )
            headers = {**self._auth_headers, **http_kwargs.get("headers", {})}
            if headers:
                http_kwargs["headers"] = headers
            card = await fetch_card(self.name, self._card_source, self._card_http(), http_kwargs)
        elif self._card_source is not None:
            card = read_card_file(self.name, self._card_source)
        else:
            raise AgentCardResolutionError(f"remote agent {self.name!r} has no agent card")
        check_card(self.name, card, self._card_source)
        if not self.description:
            self.description = adopted_description(card)
        return card

    def _http(self) -> httpx.AsyncClient:
        """The HTTP client: the one given, else the agent's own for this event loop."""
        if self._given_http is not None:
            return self._given_http
        loop = asyncio.get_running_loop()
        if self._own_http is None or self._own_loop is not loop or self._own_http.is_closed:
            self._own_http = httpx.AsyncClient(timeout=httpx.Timeout(self._timeout))
            self._own_loop = loop
        return self._own_http

    def _card_http(self) -> httpx.AsyncClient:
        factory_client = self._factory._config.httpx_client if self._factory is not None else None
        return factory_client or self._http()

    def _client_factory(self) -> ClientFactory:
        if self._factory is not None:
            return self._factory
        return ClientFactory(
            ClientConfig(httpx_client=self._http(), supported_protocol_bindings=list(_BINDINGS))
        )

    async def cleanup(self) -> None:
        """Close the A2A client and the HTTP client this agent made (not one it was given)."""
        client, self._client, self._client_loop = self._client, None, None
        own, self._own_http, self._own_loop = self._own_http, None, None
        for closing in (client.close if client else None, own.aclose if own else None):
            if closing is None:
                continue
            try:
                await closing()
            except (RuntimeError, httpx.HTTPError, A2AError) as error:
                logger.warning("remote agent %r: closing its client failed: %s", self.name, error)

    async def close(self) -> None:
        """The same as ``cleanup()``: ``Runner.close()`` closes the agents it runs that have
        an async ``close()``."""
        await self.cleanup()


__all__ = [
    "AGENT_CARD_WELL_KNOWN_PATH",
    "A2AClientError",
    "AgentCardResolutionError",
    "RemoteA2aAgent",
]
