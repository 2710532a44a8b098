"""Any provider litellm reaches, as a cairn model: ``LiteLlm(model="ollama_chat/llama3.2")``.

ADK's ``LiteLlm``: the model string is litellm's (``openai/...``, ``ollama_chat/...``,
``anthropic/...``, ``groq/...``), and every other keyword argument (``api_base``,
``api_key``, ``temperature``...) goes to ``litellm.acompletion`` as given. litellm speaks
OpenAI's chat completions format on both sides, so requests and responses are converted
by the same code as :class:`~cairn.models.openai_llm.OpenAILlm`'s. Needs
``pip install 'cairn[litellm]'``.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import logging
import os
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.genai import types
from pydantic import Field, PrivateAttr

from cairn.models.base_llm import BaseLlm
from cairn.models.errors import ModelCallError, ModelPackageMissingError
from cairn.models.llm_capabilities import LlmCapabilities
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.models.retries import Attempts, Retry, is_retryable_status, retried
from cairn.models.stream_assembly import assembled

try:  # the OpenAI-format conversion; litellm depends on openai, so it is there with litellm
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    from cairn.models.openai_llm import (
        _partial_text,
        _request_params,
        _response_from_completion,
        _retry_delay,
        _StreamAssembler,
    )
except ModuleNotFoundError as _missing:  # pragma: no cover - only without the extra
    raise ModelPackageMissingError(
        package="litellm", model_class="LiteLlm", extra="litellm"
    ) from _missing

logger = logging.getLogger(__name__)

_PROVIDER = "litellm"
_DEFAULT_RETRIES = 3
_MAX_PROVIDER_MESSAGE = 500
"""Characters of a provider's error message kept (an error page can be long HTML)."""
_MANAGED = ("messages", "tools", "stream", "stream_options", "llm_client")
"""Arguments the adapter sets itself, dropped from the constructor's keyword arguments."""
_MODEL_FIELDS = ("llm_client",)


def _litellm() -> Any:
    """litellm, imported on first use (it takes seconds), made quiet and offline.

    litellm fetches its model price list from the internet when imported unless
    ``LITELLM_LOCAL_MODEL_COST_MAP`` is set; cairn sets it (unless the app did) so
    that a model call reaches only the model's server. Its "Give Feedback" banner on
    every error is turned off: cairn reports the error itself.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        module: Any = importlib.import_module("litellm")
    except ModuleNotFoundError as error:
        raise ModelPackageMissingError(
            package="litellm", model_class="LiteLlm", extra="litellm"
        ) from error
    module.suppress_debug_info = True
    return module


def _litellm_installed() -> bool:
    """Whether litellm can be imported, without importing it (that takes seconds)."""
    try:
        return importlib.util.find_spec("litellm") is not None
    except (ImportError, ValueError):
        return False


class LiteLLMClient:
    """Sends a completion through litellm; :class:`LiteLlm` calls only this (ADK's
    ``LiteLLMClient``, the seam an app replaces to route or observe calls)."""

    async def acompletion(self, model: Any, messages: Any, tools: Any, **kwargs: Any) -> Any:
        """``litellm.acompletion``: a ``ModelResponse``, or a chunk stream with ``stream=True``."""
        return await _litellm().acompletion(model=model, messages=messages, tools=tools, **kwargs)

    def completion(
        self, model: Any, messages: Any, tools: Any, stream: bool = False, **kwargs: Any
    ) -> Any:
        """``litellm.completion``, the synchronous call."""
        return _litellm().completion(
            model=model, messages=messages, tools=tools, stream=stream, **kwargs
        )


class LiteLlm(BaseLlm):
    """A model reached through litellm, e.g. ``LiteLlm(model="openai/my-model",
    api_base="http://localhost:8080/v1", api_key="unused")``.

    Keyword arguments other than ``model`` and ``llm_client`` are litellm's and are sent
    with every call; a setting of the agent's ``generate_content_config`` (temperature,
    max output tokens...) takes precedence over the same one given here. Credentials come
    from these arguments or from the environment variables litellm reads for the provider
    (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``...); they are never stored in events.

    Rate limits (429), server errors (5xx), timeouts, lost connections and a stream that
    ends with no reply are retried ``num_retries`` times (default 3; litellm's own name,
    so litellm does not retry on top) with exponential backoff honouring ``Retry-After``,
    as long as nothing was streamed yet; then, or on any other error, a
    :class:`~cairn.models.errors.ModelCallError` is raised, which the agent stores as an
    error event.
    """

    llm_client: LiteLLMClient = Field(default_factory=LiteLLMClient, exclude=True, repr=False)
    """What sends the calls (replace it to route or observe them)."""

    _additional_args: dict[str, Any] = PrivateAttr(default_factory=dict)
    _retries: int = PrivateAttr(default=_DEFAULT_RETRIES)
    # A factory, not default=asyncio.sleep: pydantic would bind a function default as a method.
    _sleep: Callable[[float], Awaitable[None]] = PrivateAttr(default_factory=lambda: asyncio.sleep)
    """How to wait between attempts (tests put a recorder here)."""

    def __init__(self, model: str, **kwargs: Any) -> None:
        if not _litellm_installed():
            raise ModelPackageMissingError(
                package="litellm", model_class=type(self).__name__, extra="litellm"
            )
        fields = {name: kwargs.pop(name) for name in _MODEL_FIELDS if name in kwargs}
        super().__init__(model=model, **fields)
        retries = kwargs.pop("num_retries", None)
        if retries is not None:
            if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
                raise ValueError(
                    f"LiteLlm(model={model!r}, num_retries={retries!r}): num_retries is how "
                    "many times a failed call is retried; give a whole number >= 0"
                )
            self._retries = retries
        for name in _MANAGED:
            kwargs.pop(name, None)
        # The SDK litellm drives for OpenAI-style providers retries on its own; cairn retries
        # (and counts and logs each attempt) in one place instead.
        kwargs.setdefault("max_retries", 0)
        self._additional_args = kwargs

    @classmethod
    def supported_models(cls) -> list[str]:
        # ADK's LiteLlm patterns, less openai/ and anthropic/: cairn serves those with its
        # own adapters (OpenAILlm, AnthropicLlm); LiteLlm(model="openai/...") still works.
        return [
            r"azure/.*",
            r"azure_ai/.*",
            r"groq/.*",
            r"bedrock/.*",
            r"ollama/(?!gemma3).*",
            r"ollama_chat/.*",
            r"together_ai/.*",
            r"vertex_ai/.*",
            r"mistral/.*",
            r"deepseek/.*",
            r"fireworks_ai/.*",
            r"cohere/.*",
            r"databricks/.*",
            r"ai21/.*",
        ]

    @property
    def capabilities(self) -> LlmCapabilities:
        """Output schema with tools: OpenAI and Azure models, and others litellm knows to
        support a response schema (never Anthropic's, which take one or the other)."""
        provider = str(self._additional_args.get("custom_llm_provider") or "")
        provider = provider or self.model.split("/", 1)[0]
        if provider in ("openai", "azure"):
            return LlmCapabilities(output_schema_and_tools=True)
        if provider in ("anthropic", "bedrock") or "claude" in self.model.lower():
            return LlmCapabilities(output_schema_and_tools=False)
        try:
            supported = bool(_litellm().supports_response_schema(model=self.model))
        except Exception:  # litellm does not know the model: assume the basics only
            supported = False
        return LlmCapabilities(output_schema_and_tools=supported)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        args = self._completion_args(llm_request)
        async for response in retried(
            lambda: self._attempt(args, stream),
            self._decide,
            retry_on=(Exception,),
            sleep=self._sleep,
            label=f"litellm model {self.model!r}",
            shows_output=lambda response: response.partial is True,
        ):
            yield response

    def _decide(self, error: Exception, attempts: Attempts) -> Retry:
        """Retry what litellm reports as a retryable failure before output was shown; raise
        the call's ModelCallError otherwise (and a failure that is no failed call as it is)."""
        failure = self._call_error(
            error, attempts=attempts.number, during_stream=attempts.output_shown
        )
        if failure is None:
            raise error
        if attempts.output_shown or not failure.retryable or attempts.number > self._retries:
            raise failure from error
        return Retry(
            wait=_retry_delay(_response_headers(error), attempts.number),
            reason=_reason(failure),
            limits=f"of {self._retries}",
        )

    def _completion_args(self, llm_request: LlmRequest) -> dict[str, Any]:
        """litellm's arguments: the constructor's, then the request's (which take precedence)."""
        model = llm_request.model or self.model
        params = _request_params(llm_request, model)
        params["model"] = model  # litellm reads the provider from the prefix; keep it
        args: dict[str, Any] = {**self._additional_args, **params}
        args.setdefault("tools", None)
        http_options = llm_request.config.http_options
        if http_options is not None:
            if http_options.headers:
                headers = dict(args.get("extra_headers") or {})
                headers.update(http_options.headers)
                args["extra_headers"] = headers
            if http_options.timeout is not None:
                args["timeout"] = http_options.timeout / 1000  # milliseconds; litellm's: seconds
            if http_options.extra_body is not None:
                args["extra_body"] = http_options.extra_body
        return args

    async def _attempt(
        self, args: dict[str, Any], stream: bool
    ) -> AsyncGenerator[LlmResponse, None]:
        """One call: its response, or its partial chunks and then the assembled response."""
        if not stream:
            completion = await self.llm_client.acompletion(**args)
            message = _message_of(completion)
            response = _response_from_completion(_as_openai(ChatCompletion, completion))
            yield _with_reasoning(response, _reasoning_of(message))
            return
        chunks = await self.llm_client.acompletion(
            stream=True, stream_options={"include_usage": True}, **args
        )
        async for response in assembled(chunks, _LiteStreamAssembler()):
            yield response

    def _call_error(
        self, error: Exception, *, attempts: int, during_stream: bool
    ) -> ModelCallError | None:
        """``error`` as a ModelCallError, or None when it is not a failed call (a bug)."""
        if isinstance(error, _EmptyStreamError):
            status: int | None = None
            message = str(error)
            hint = "Check the model server's log; the call is retried when nothing was shown"
        else:
            kind = _failure_kind(error)
            if kind is None:
                return None
            if kind == "timeout":
                status = None
                message = "no response in time"
                hint = "Raise timeout=, or check that the model server is reachable"
            elif kind == "connection":
                status = None
                message = f"no connection to the model server ({_provider_message(error)})"
                hint = (
                    "Check that the server runs and that api_base (or the provider's base URL "
                    "environment variable) is right"
                )
            else:
                status = int(getattr(error, "status_code", 0) or 0) or None
                message = _provider_message(error)
                hint = _hint(error, status, self.model)
        if during_stream:
            hint = (
                "The stream broke off after output was shown, so it was not retried (that "
                "would show the output twice); run the turn again"
            )
        secret = self._additional_args.get("api_key")
        if isinstance(secret, str) and secret:  # a server may echo what it was sent
            message = message.replace(secret, "<api key>")
        return ModelCallError(
            provider=_PROVIDER,
            model=self.model,
            status_code=status,
            provider_message=message[:_MAX_PROVIDER_MESSAGE],
            retryable=status is None or is_retryable_status(status),
            attempts=attempts,
            hint=hint,
        )


class _EmptyStreamError(Exception):
    """A stream that ended before any reply: the server failed after answering 200."""


# --- litellm's objects as OpenAI's ---------------------------------------------------------


def _as_openai(kind: Any, value: Any) -> Any:
    """A litellm ``ModelResponse`` / stream chunk as the OpenAI SDK type of the same shape,
    so that the OpenAI adapter's conversion reads it (litellm's objects lack some fields)."""
    data = value.model_dump() if hasattr(value, "model_dump") else dict(value)
    return kind.model_validate(data)


def _message_of(completion: Any) -> Any:
    choices = getattr(completion, "choices", None) or []
    return getattr(choices[0], "message", None) if choices else None


def _reasoning_of(message: Any) -> str:
    """The reasoning text litellm puts beside a message or delta (``reasoning_content``)."""
    value = getattr(message, "reasoning_content", None) if message is not None else None
    return value if isinstance(value, str) else ""


def _with_reasoning(response: LlmResponse, reasoning: str) -> LlmResponse:
    """The reasoning as a leading thought part: kept in the event, never shown as the answer."""
    if not reasoning or response.content is None:
        return response
    thought = types.Part(text=reasoning, thought=True)
    response.content.parts = [thought, *(response.content.parts or [])]
    return response


# --- errors --------------------------------------------------------------------------------


def _causes(error: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _failure_kind(error: Exception) -> str | None:
    """'timeout', 'connection' or 'status' for a failed call; None for anything else.

    litellm reports a refused connection as an InternalServerError with status 500 (and a
    timeout as 408): the OpenAI SDK's or httpx's error underneath says what happened.
    """
    names = {type(cause).__name__ for cause in _causes(error)}
    modules = {type(cause).__module__.split(".")[0] for cause in _causes(error)}
    if names & {"Timeout", "APITimeoutError", "ReadTimeout", "ConnectTimeout", "TimeoutError"}:
        return "timeout"
    if names & {"APIConnectionError", "ConnectError", "RemoteProtocolError", "ReadError"}:
        return "connection"
    if {"litellm", "openai"} & modules and isinstance(getattr(error, "status_code", None), int):
        return "status"
    return None


def _provider_message(error: Exception) -> str:
    """The provider's own words: ``message`` of the JSON error body, else litellm's text
    without its ``litellm.X: X: Provider - `` prefix."""
    body = getattr(error, "body", None)
    if isinstance(body, Mapping):
        said = body.get("message") or body.get("detail")
        if isinstance(said, str) and said.strip():
            return said.strip()
    text = str(getattr(error, "message", None) or error)
    _, separator, rest = text.partition(" - ")
    return (rest if separator else text).strip()


def _response_headers(error: Exception) -> Mapping[str, str]:
    headers = getattr(error, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(error, "response", None), "headers", None)
    return dict(headers.items()) if headers is not None else {}


def _hint(error: Exception, status: int | None, model: str) -> str:
    if type(error).__name__ == "ContextWindowExceededError":
        return (
            "The conversation is longer than the model's context window, and stays so on every "
            "later turn: rewind the session before the long message, or configure compaction "
            "(docs/compaction.md)"
        )
    if status in (401, 403):
        return (
            "Check the API key (api_key=, or the provider's environment variable such as "
            "OPENAI_API_KEY) and that it may use this model"
        )
    if status == 404:
        return f"Check the model name {model!r} and the server address (api_base=)"
    if status == 429:
        return "The provider is rate limiting this key: wait, or raise num_retries="
    if status is not None and status >= 500:
        return "The model server failed; try again later, or raise num_retries="
    return "The provider rejected the request; its message says what to change"


@dataclass
class _LiteStreamAssembler(_StreamAssembler):
    """OpenAI's chunk assembly for litellm's chunks, keeping the reasoning beside them."""

    reasoning: list[str] = field(default_factory=list)

    def add(self, chunk: Any) -> LlmResponse | None:
        for choice in getattr(chunk, "choices", None) or []:
            thought = _reasoning_of(getattr(choice, "delta", None))
            if thought:
                self.reasoning.append(thought)
        text = self.take(_as_openai(ChatCompletionChunk, chunk))
        return _partial_text(text, getattr(chunk, "model", None))

    def final(self) -> LlmResponse:
        if not "".join(self.text) and not self.calls:
            # litellm ends a stream the server cut off before any data with a "stop" of its
            # own, so an empty stream cannot be told from an empty reply: both are retried.
            raise _EmptyStreamError(
                "the stream ended with no text and no tool calls: the server failed after "
                "accepting the request (litellm reports a stream cut off before any data so), "
                "or the model said nothing"
            )
        return _with_reasoning(self.response(), "".join(self.reasoning))


def _reason(failure: ModelCallError) -> str:
    return f"HTTP {failure.status_code}" if failure.status_code else "no reply"


__all__ = ["LiteLLMClient", "LiteLlm", "logger"]
