"""OpenAI chat completions as a cairn model: ``openai/<model>``.

Any OpenAI-compatible server works too (vLLM, Ollama, llama.cpp server): give
``base_url=`` (or set ``OPENAI_BASE_URL``) and no API key is needed.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import logging
import os
import re
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, cast

import httpx2
import openai
from google.genai import types
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from pydantic import BaseModel, Field, PrivateAttr, TypeAdapter

from cairn.models.base_llm import BaseLlm
from cairn.models.errors import ContextWindowExceededError, MissingApiKeyError, ModelCallError
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.models.openai_config import (
    drop_unsupported_sampling,
    is_reasoning_model,
    reasoning_effort,
)
from cairn.models.retries import Attempts, Retry, backoff_seconds, retried, retry_after_seconds
from cairn.models.stream_assembly import assembled

logger = logging.getLogger(__name__)

_PROVIDER = "openai"
_PREFIX = "openai/"
_LOCAL_SERVER_KEY = "not-needed"
"""Sent when a base_url is given without a key: local servers ignore the Authorization header."""
_MAX_RETRY_WAIT = 60.0
"""The longest wait before a retry, whatever a Retry-After header asks for."""
_INITIAL_BACKOFF = 0.5
_MAX_BACKOFF = 8.0

_FINISH_REASONS = {
    "stop": types.FinishReason.STOP,
    "length": types.FinishReason.MAX_TOKENS,
    "tool_calls": types.FinishReason.STOP,
    "function_call": types.FinishReason.STOP,
    "content_filter": types.FinishReason.SAFETY,
}


class _OpenAIClientLlm(BaseLlm):
    """What cairn's adapters on the ``openai`` SDK share: the client and its settings, the
    retry loop and the translation of failures into
    :class:`~cairn.models.errors.ModelCallError`.

    Passing failures are retried with exponential backoff (about 0.5 s, 1 s, 2 s
    ... up to 8 s, or what ``Retry-After`` asks for): no connection, timeouts,
    429, 502, 503, 504, and a stream that ended with nothing in it. Retries stop
    after ``max_retries`` of them, or once the waits would add up to more than
    ``retry_window`` seconds, whichever comes first; the 30 s default outlasts
    the restart of a small local model server. A 500 (or other 5xx) is retried
    too, unless the retry fails with the same message: a server that says the
    same thing twice is rejecting this request, and saying it again will not
    help. Any other HTTP error (400, 401, 404 ...) is raised at once. Each is a
    :class:`~cairn.models.errors.ModelCallError`;
    :class:`~cairn.models.errors.ContextWindowExceededError` when the server says
    the prompt does not fit the model's context window.
    """

    base_url: str | None = None
    api_key: str | Callable[[], str] | Callable[[], Awaitable[str]] | None = Field(
        default=None, repr=False, exclude=True
    )
    """The API key, or a function (sync or async) that returns it, asked before every
    request so that a credential that expires is refreshed (as in ADK)."""
    client: openai.AsyncOpenAI | None = Field(default=None, repr=False, exclude=True)
    """A client you configured yourself (organization, headers, proxies ...); ``base_url``
    and ``api_key`` are then not used. cairn still makes the retries (the client's own
    ``max_retries`` is set to 0 for its calls, so that every attempt is counted)."""
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=10, ge=0)
    retry_window: float = Field(default=30.0, ge=0)
    """Seconds of waiting between retries, at most, for one call (see the class doc)."""
    http_client: httpx2.AsyncClient | None = Field(default=None, repr=False, exclude=True)
    """The HTTP client the SDK sends with (for proxies, custom transports, tests)."""

    _provider: ClassVar[str] = "openai"
    """The provider named in errors and logs."""
    _api_key_env: ClassVar[str] = "OPENAI_API_KEY"

    # A factory, not default=asyncio.sleep: pydantic would bind a function default as a method.
    _sleep: Callable[[float], Awaitable[None]] = PrivateAttr(default_factory=lambda: asyncio.sleep)
    """How to wait between attempts (tests put a recorder here)."""
    _client_cache: tuple[asyncio.AbstractEventLoop | None, openai.AsyncOpenAI] | None = PrivateAttr(
        default=None
    )
    _learnt_window: int | None = PrivateAttr(default=None)
    """The context window a server stated in an overflow error."""

    def _targets_openai(self) -> bool:
        """Whether calls go to api.openai.com (where reasoning efforts are checked against
        the model), not to a compatible server whose model names may be anything."""
        return (
            self.client is None and self.base_url is None and not os.environ.get("OPENAI_BASE_URL")
        )

    def _wire_model(self, llm_request: LlmRequest) -> str:
        """The model name sent to the server."""
        return _model_name(llm_request.model or self.model)

    async def _retried(
        self, attempt: Callable[[openai.AsyncOpenAI], AsyncIterator[LlmResponse]]
    ) -> AsyncGenerator[LlmResponse, None]:
        """Run ``attempt`` (one request, its responses yielded as they come) until it
        succeeds or the retry rules give up; a failure after a partial response was
        yielded is raised at once (trying again would show that output twice)."""
        client = self._client()
        async for response in retried(
            lambda: attempt(client),
            lambda error, attempts: self._decide(error, client, attempts),
            retry_on=(openai.APIError, httpx2.TransportError, _EmptyStreamError, _StreamFailure),
            sleep=self._sleep,
            label=f"{self._provider} model {self.model!r}",
            shows_output=lambda response: response.partial is True,
        ):
            yield response

    def _decide(self, error: Exception, client: openai.AsyncOpenAI, attempts: Attempts) -> Retry:
        """The wait before the next attempt after ``error``; raises the ModelCallError
        instead when the call is not to be tried again."""
        if attempts.output_shown:
            raise self._call_error(
                error, client, attempts=attempts.number, during_stream=True
            ) from error
        failure = _classify(error)
        if failure.kind == "final":
            raise self._call_error(error, client, attempts=attempts.number) from error
        if failure.kind == "server" and failure.same_as(attempts.memo):
            raise self._call_error(
                error, client, attempts=attempts.number, repeated=True
            ) from error
        if isinstance(error, openai.APIStatusError):
            delay = _retry_delay(error.response.headers, attempts.number)
        else:
            delay = _backoff(attempts.number)
        if attempts.number > self.max_retries or attempts.waited + delay > self.retry_window:
            raise self._call_error(error, client, attempts=attempts.number) from error
        if failure.kind == "server":
            attempts.memo = failure  # a dropped connection in between does not make it new
        return Retry(
            wait=delay,
            reason=failure.reason,
            limits=(
                f"(retries stop after max_retries={self.max_retries} or "
                f"retry_window={self.retry_window:g}s of waiting)"
            ),
        )

    def _client(self) -> openai.AsyncOpenAI:
        """The SDK client, made once per event loop (its connection pool belongs to one loop)."""
        loop = asyncio.get_running_loop()
        if self._client_cache is not None and (
            self._client_cache[0] is loop or self._client_cache[0] is None
        ):
            return self._client_cache[1]
        if self.client is not None:
            # The caller's own client (and its connection pool); only its retries are turned off.
            client = self.client.with_options(max_retries=0)
            self._client_cache = (None, client)
            return client
        base_url, api_key = self._endpoint()
        client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=self.timeout,
            max_retries=0,  # retried here, so that every attempt is counted and logged
            http_client=self.http_client,
        )
        self._client_cache = (None if self.http_client is not None else loop, client)
        return client

    def _endpoint(self) -> tuple[str | None, str | Callable[[], Awaitable[str]]]:
        """The base URL (None: the SDK's default host) and the key or key provider to send."""
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or None
        return base_url, self._key(base_url, local_hint=True)

    def _key(self, base_url: str | None, *, local_hint: bool) -> str | Callable[[], Awaitable[str]]:
        """``api_key`` (a provider made async), else the environment's; a server of one's own
        (a base URL given) gets a placeholder, others a MissingApiKeyError."""
        if self.api_key is not None and not isinstance(self.api_key, str):
            return _async_key_provider(self.api_key, self)
        api_key = self.api_key or os.environ.get(self._api_key_env) or None
        if api_key is not None:
            return api_key
        if base_url is None or not local_hint:
            raise MissingApiKeyError(
                provider=self._provider,
                model=self.model,
                env_var=self._api_key_env,
                model_class=type(self).__name__,
                hint="For a local OpenAI-compatible server (vLLM, Ollama, llama.cpp) pass "
                "base_url=... or set OPENAI_BASE_URL instead; no key is needed then."
                if local_hint
                else "",
            )
        return _LOCAL_SERVER_KEY

    def _call_error(
        self,
        error: Exception,
        client: openai.AsyncOpenAI,
        *,
        attempts: int,
        during_stream: bool = False,
        repeated: bool = False,
    ) -> ModelCallError:
        server = str(client.base_url)
        status: int | None = None
        retryable = True
        if isinstance(error, openai.APIStatusError):
            status = error.status_code
            message = _provider_message(error)
            retryable = _classify(error).kind != "final"
            if _is_context_overflow(error, message):
                window = _stated_window(error, message)
                if window is not None:
                    self._learnt_window = window
                return ContextWindowExceededError(
                    provider=self._provider,
                    model=self.model,
                    status_code=status,
                    provider_message=self._redacted(message, client),
                    context_window=window,
                )
            if status in (401, 403):
                hint = (
                    f"Check the API key ({self._api_key_env} or api_key=) and that it may use "
                    "this model"
                )
            elif status == 404:
                hint = (
                    f"Check the model name {_model_name(self.model)!r} (what the server is "
                    f"sent) and the server address {server}"
                )
            elif status == 429:
                hint = (
                    "The provider is rate limiting this key or its quota is used up: wait, lower "
                    "the request rate, or raise max_retries= and retry_window="
                )
            elif status >= 500:
                hint = (
                    "The provider failed; try again later, or raise max_retries= and retry_window="
                )
            else:
                hint = "The provider rejected the request; its message says what to change"
        elif isinstance(error, openai.APITimeoutError | httpx2.TimeoutException):
            message = f"no response within timeout={self.timeout}s"
            hint = f"Raise timeout=, or check that {server} is reachable"
        elif isinstance(error, openai.APIConnectionError | httpx2.TransportError):
            cause = error.__cause__ or error
            message = f"no connection to {server}: {type(cause).__name__}: {cause}"
            hint = (
                "Check that the server runs and that base_url (or OPENAI_BASE_URL) is right; "
                "raise retry_window= to wait longer for a server that is starting"
            )
        elif isinstance(error, _EmptyStreamError):
            message = str(error)
            hint = "The server failed after it had started to answer; try again later"
        else:  # an error event inside a stream
            message = _provider_message(error)
            hint = ""
        if repeated:
            retryable = False
            hint = (
                "The server failed this request the same way twice, so it was not retried "
                "further: that is the server's answer to this request, not a passing failure"
            )
            if isinstance(error, _EmptyStreamError):
                hint += (
                    ". A server that cannot stream this request (some cannot stream tool "
                    "calls) answers it with streaming off: `cairn run --no-stream`, or "
                    "RunConfig(streaming_mode=StreamingMode.NONE)"
                )
            else:
                hint += "; its message says what it objects to"
        if during_stream:
            hint = (
                "The stream broke off after output was shown, so it was not retried (that "
                "would show the output twice); run the turn again"
            )
        return ModelCallError(
            provider=self._provider,
            model=self.model,
            status_code=status,
            provider_message=self._redacted(message, client),
            retryable=retryable,
            attempts=attempts,
            hint=hint,
        )

    def _redacted(self, message: str, client: openai.AsyncOpenAI) -> str:
        """A server may echo what it was sent; the key is never shown."""
        for key in (client.api_key, self.api_key):
            if isinstance(key, str) and len(key) >= 4 and key != _LOCAL_SERVER_KEY:
                message = message.replace(key, "<api key>")
        return message


class OpenAILlm(_OpenAIClientLlm):
    """A model served by the OpenAI chat completions API, or any server speaking it.

    ``OpenAILlm(model="openai/gpt-4o-mini")`` reads ``OPENAI_API_KEY`` (and
    ``OPENAI_BASE_URL``) from the environment; ``base_url=`` without a key
    reaches a local server. Retries and errors are those of the shared base class (below);
    a prompt that does not fit ``context_window`` (set here, or learnt from a
    server that said it in an overflow error) is refused before it is sent.

    For the reasoning models (o-series, gpt-5 ...) the output limit is sent as
    ``max_completion_tokens`` and a ``temperature`` / ``top_p`` other than 1 is
    left out (they refuse it), and the reasoning effort of an
    :class:`~cairn.models.openai_config.OpenAIGenerateContentConfig` is sent as
    ``reasoning_effort``, as in ADK's OpenAI integration.
    """

    max_tokens: int | None = Field(default=None, gt=0)
    """The output limit sent when the request's ``max_output_tokens`` sets none (``None``:
    the server's own)."""
    context_window: int | None = Field(default=None, gt=0)
    """The model's context window in tokens; prompts estimated to exceed it are refused
    before they are sent. ``None``: unknown until a server's overflow error says it."""

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"openai/.+"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        params = self._params(llm_request)
        self._check_prompt_size(params)

        async def attempt(client: openai.AsyncOpenAI) -> AsyncIterator[LlmResponse]:
            if not stream:
                completion = await client.chat.completions.create(**params)
                yield _response_from_completion(completion)
                return
            chunks = await client.chat.completions.create(
                stream=True, stream_options={"include_usage": True}, **params
            )
            async for response in assembled(chunks, _StreamAssembler()):
                yield response

        async for response in self._retried(attempt):
            yield response

    def _params(self, llm_request: LlmRequest) -> dict[str, Any]:
        """The request body: the conversion, this model's output limit, and the settings of
        a reasoning model."""
        params = _request_params(llm_request, llm_request.model or self.model)
        if self.max_tokens is not None and "max_tokens" not in params:
            params["max_tokens"] = self.max_tokens
        model = params["model"]
        if is_reasoning_model(model) and "max_tokens" in params:
            params["max_completion_tokens"] = params.pop("max_tokens")
        drop_unsupported_sampling(params, model)
        effort = reasoning_effort(
            llm_request.config, model, "chat", validate=self._targets_openai()
        )
        if effort is not None:
            params["reasoning_effort"] = effort
        return params

    def _check_prompt_size(self, params: dict[str, Any]) -> None:
        """Refuse a prompt estimated not to fit the known context window, before sending."""
        window = self.context_window or self._learnt_window
        if window is None:
            return
        prompt = _estimated_tokens(params)
        output = params.get("max_tokens") or params.get("max_completion_tokens")
        wanted = prompt + int(output or 0)
        if wanted <= window:
            return
        asked = f" plus max_output_tokens={output}" if output else ""
        source = "context_window=" if self.context_window else "the window the server stated"
        raise ContextWindowExceededError(
            provider=self._provider,
            model=self.model,
            provider_message=f"the prompt is about {prompt} tokens{asked}, more than the "
            f"model's context window of {window} tokens ({source})",
            context_window=window,
            prompt_tokens=prompt,
            before_sending=True,
        )


def _async_key_provider(
    provider: Callable[[], str] | Callable[[], Awaitable[str]], llm: _OpenAIClientLlm
) -> Callable[[], Awaitable[str]]:
    """An ``api_key`` function as the SDK takes it: async, asked before every request. A
    sync one runs on a worker thread (it may block fetching a token)."""

    async def key() -> str:
        if inspect.iscoroutinefunction(provider):
            value: object = await provider()
        else:
            value = await asyncio.to_thread(provider)
            if inspect.isawaitable(value):
                value = await value
        if not isinstance(value, str) or not value:
            raise MissingApiKeyError(
                provider=llm._provider,
                model=llm.model,
                env_var=llm._api_key_env,
                hint=f"The api_key function returned {type(value).__name__}, not a key string",
            )
        return value

    return key


# --- retries -------------------------------------------------------------------------------


class _EmptyStreamError(Exception):
    """The server answered 200 and then its stream ended with no data and no finish reason
    (or, with a message, ended before the answer was complete)."""

    def __init__(self, message: str = "") -> None:
        super().__init__(
            message
            or "the server answered 200, then its stream ended with no data and no finish "
            "reason (it failed after it had started to answer)"
        )


class _StreamFailure(Exception):
    """The server reported a failure in the answer itself (an ``error`` event in a stream,
    a response whose status is ``failed``): retried like a server error."""

    def __init__(self, message: str, code: str | None = None) -> None:
        self.code = code
        super().__init__(f"{message} (code {code})" if code else message)


_TRANSIENT_STATUSES = frozenset({408, 409, 429, 502, 503, 504, 529})
"""Timeouts, conflicts, rate limits, a gateway or an overloaded or restarting server."""


@dataclass(frozen=True)
class _Failure:
    """One failed attempt, as the retry rules see it.

    ``kind`` is ``"transient"`` (retried while the budget lasts), ``"server"`` (a 5xx or a
    stream that failed: retried unless the retry fails the same way) or ``"final"``.
    """

    kind: str
    reason: str
    status: int | None = None
    message: str = ""

    def same_as(self, other: _Failure | None) -> bool:
        return (
            other is not None
            and other.kind == "server"
            and (other.status, other.message) == (self.status, self.message)
        )


def _classify(error: Exception) -> _Failure:
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        reason = f"HTTP {status}"
        if status in _TRANSIENT_STATUSES:
            return _Failure("transient", reason, status)
        if status >= 500 and status != 501:
            return _Failure("server", reason, status, _provider_message(error))
        return _Failure("final", reason, status)
    if isinstance(error, openai.APITimeoutError | httpx2.TimeoutException):
        return _Failure("transient", "timeout")
    if isinstance(error, openai.APIConnectionError | httpx2.TransportError):
        return _Failure("transient", "no connection")
    if isinstance(error, _EmptyStreamError):
        return _Failure("server", "empty stream", None, str(error))
    return _Failure("server", "error in the stream", None, _provider_message(error))


def _backoff(attempt: int) -> float:
    """About 0.5 s, 1 s, 2 s ... up to 8 s."""
    return backoff_seconds(attempt, first=_INITIAL_BACKOFF, longest=_MAX_BACKOFF)


def _retry_delay(headers: Mapping[str, str], attempt: int, now: datetime | None = None) -> float:
    """The wait a Retry-After header asks for (capped), else exponential backoff."""
    asked = retry_after_seconds(headers, now)
    if asked is None:
        return _backoff(attempt)
    return min(asked, _MAX_RETRY_WAIT)


# --- context window ------------------------------------------------------------------------

_CHARS_PER_TOKEN = 4
"""The estimate's rate: about four characters a token for English text and fewer for code,
JSON or other languages, so the estimate errs low (a prompt it lets through may still
overflow; the server's refusal is then the same typed error)."""

_OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_OVERFLOW_WORDS = re.compile(
    r"maximum context length|context window|context size|context length|prompt is too long",
    re.IGNORECASE,
)
_STATED_WINDOW = re.compile(
    r"(?:maximum context length is|context window of|context size of|n_ctx\W+)\s*(\d+)",
    re.IGNORECASE,
)


def _estimated_tokens(params: dict[str, Any]) -> int:
    """A rough count of the prompt's tokens: its text and tool schemas at about four
    characters a token, and a few tokens for each message's framing."""
    characters = 0
    for message in params["messages"]:
        content = message.get("content")
        if isinstance(content, str):
            characters += len(content)
        elif isinstance(content, list):
            characters += sum(len(part.get("text") or "") for part in content)
        for call in message.get("tool_calls") or []:
            characters += len(call["function"]["name"]) + len(call["function"]["arguments"])
    characters += sum(len(json.dumps(tool)) for tool in params.get("tools") or [])
    return characters // _CHARS_PER_TOKEN + 4 * len(params["messages"])


def _is_context_overflow(error: openai.APIStatusError, message: str) -> bool:
    if error.status_code not in (400, 413, 422):
        return False
    body = getattr(error, "body", None)
    if isinstance(body, Mapping) and (
        body.get("code") in _OVERFLOW_CODES or body.get("type") in _OVERFLOW_CODES
    ):
        return True
    return bool(_OVERFLOW_WORDS.search(message))


def _stated_window(error: openai.APIStatusError, message: str) -> int | None:
    """The context window the server named: a JSON ``n_ctx``, or in its message."""
    body = getattr(error, "body", None)
    if isinstance(body, Mapping) and isinstance(body.get("n_ctx"), int):
        return int(body["n_ctx"])
    found = _STATED_WINDOW.search(message)
    return int(found.group(1)) if found else None


def _provider_message(error: Exception) -> str:
    """The provider's own words: ``error.message`` of the JSON body, else the body, else str()."""
    body = getattr(error, "body", None)
    if isinstance(body, Mapping):
        message = body.get("message")
        if isinstance(message, str) and message:
            return message
    if isinstance(body, str) and body.strip():
        return body.strip()
    return str(getattr(error, "message", None) or error)


# --- request -------------------------------------------------------------------------------


def _model_name(model: str) -> str:
    return model.removeprefix(_PREFIX)


def _request_params(llm_request: LlmRequest, model: str) -> dict[str, Any]:
    """The body of a chat completions request, without ``stream``."""
    config = llm_request.config
    params: dict[str, Any] = {
        "model": _model_name(model),
        "messages": _messages(llm_request),
    }
    declarations = llm_request.function_declarations
    if declarations:
        params["tools"] = [_tool(declaration) for declaration in declarations]
        params["tool_choice"] = _tool_choice(config)
    settings = {
        "temperature": config.temperature,
        "max_tokens": config.max_output_tokens,
        "top_p": config.top_p,
        "stop": config.stop_sequences or None,
        "seed": config.seed,
        "presence_penalty": config.presence_penalty,
        "frequency_penalty": config.frequency_penalty,
        "response_format": _response_format(config),
    }
    params.update({key: value for key, value in settings.items() if value is not None})
    return params


def _messages(llm_request: LlmRequest) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    system = llm_request.system_instruction_text
    if system:
        messages.append({"role": "system", "content": system})
    pending_ids: dict[str, list[str]] = {}
    for content in llm_request.contents:
        if content.role == "model":
            assistant = _assistant_message(content.parts or [], pending_ids)
            if assistant is not None:
                messages.append(assistant)
        else:
            messages.extend(_user_messages(content.parts or [], pending_ids))
    return messages


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _assistant_message(
    parts: list[types.Part], pending_ids: dict[str, list[str]]
) -> dict[str, Any] | None:
    """One assistant message: its text (``""`` for a turn of tool calls only, which every
    server accepts), and its function calls as ``tool_calls``.

    A call without an id gets a generated one, remembered (by tool name) for its response.
    """
    text = "".join(part.text for part in parts if part.text and not part.thought)
    tool_calls = []
    for part in parts:
        call = part.function_call
        if call is None:
            continue
        call_id = call.id
        if not call_id:
            call_id = _new_call_id()
            pending_ids.setdefault(call.name or "", []).append(call_id)
        tool_calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": call.name or "",
                    "arguments": json.dumps(call.args or {}, ensure_ascii=False),
                },
            }
        )
    if not text and not tool_calls:
        return None
    # Always a string: some servers' chat templates fail on a missing or null content.
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def _user_messages(
    parts: list[types.Part], pending_ids: dict[str, list[str]]
) -> list[dict[str, Any]]:
    """Tool results first (they must follow the assistant's calls), then the user's own parts."""
    messages: list[dict[str, Any]] = []
    content_parts: list[dict[str, Any]] = []
    for part in parts:
        if part.function_response is not None:
            response = part.function_response
            call_id = response.id
            if not call_id:
                waiting = pending_ids.get(response.name or "")
                call_id = waiting.pop(0) if waiting else _new_call_id()
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "content": json.dumps(response.response or {}, ensure_ascii=False, default=str),
                }
            )
        elif part.text and not part.thought:
            content_parts.append({"type": "text", "text": part.text})
        elif part.inline_data is not None and part.inline_data.data is not None:
            mime_type = part.inline_data.mime_type or "application/octet-stream"
            if mime_type.startswith("image/"):
                data = base64.b64encode(part.inline_data.data).decode("ascii")
                url = f"data:{mime_type};base64,{data}"
                content_parts.append({"type": "image_url", "image_url": {"url": url}})
            else:
                logger.warning(
                    "%s: an inline %s part was left out of the request; this adapter sends "
                    "text and images only",
                    _PROVIDER,
                    mime_type,
                )
        elif part.file_data is not None and part.file_data.file_uri:
            uri = part.file_data.file_uri
            if (part.file_data.mime_type or "").startswith("image/") and uri.startswith("http"):
                content_parts.append({"type": "image_url", "image_url": {"url": uri}})
            else:
                logger.warning(
                    "%s: file %s was left out of the request; this adapter sends images by "
                    "http(s) URL only",
                    _PROVIDER,
                    uri,
                )
    if len(content_parts) == 1 and content_parts[0]["type"] == "text":
        messages.append({"role": "user", "content": content_parts[0]["text"]})
    elif content_parts:
        messages.append({"role": "user", "content": content_parts})
    return messages


def _tool(declaration: types.FunctionDeclaration) -> dict[str, Any]:
    if isinstance(declaration.parameters_json_schema, dict):
        parameters: dict[str, Any] = declaration.parameters_json_schema
    elif declaration.parameters is not None:
        parameters = _json_schema(declaration.parameters)
    else:
        parameters = {"type": "object", "properties": {}}
    function: dict[str, Any] = {"name": declaration.name, "parameters": parameters}
    if declaration.description:
        function["description"] = declaration.description
    return {"type": "function", "function": function}


def _json_schema(schema: types.Schema) -> dict[str, Any]:
    """A google-genai Schema (OpenAPI subset, upper-case types) as JSON Schema."""
    return _json_schema_node(schema.model_dump(mode="json", exclude_none=True, by_alias=True))


def _json_schema_node(node: dict[str, Any]) -> dict[str, Any]:
    converted: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            converted[key] = value.lower()
        elif key == "properties" and isinstance(value, dict):
            converted[key] = {name: _json_schema_node(sub) for name, sub in value.items()}
        elif key == "items" and isinstance(value, dict):
            converted[key] = _json_schema_node(value)
        elif key == "anyOf" and isinstance(value, list):
            converted[key] = [_json_schema_node(sub) for sub in value]
        elif key not in ("nullable", "propertyOrdering"):
            converted[key] = value
    if node.get("nullable") and isinstance(converted.get("type"), str):
        converted["type"] = [converted["type"], "null"]
    return converted


def _response_format(config: types.GenerateContentConfig) -> dict[str, Any] | None:
    schema: Any = config.response_json_schema
    if schema is None and config.response_schema is not None:
        wanted = config.response_schema
        if isinstance(wanted, types.Schema):
            schema = _json_schema(wanted)
        elif isinstance(wanted, dict):
            schema = wanted
        elif isinstance(wanted, type) and issubclass(wanted, BaseModel):
            schema = wanted.model_json_schema()
        else:
            schema = TypeAdapter(cast(Any, wanted)).json_schema()
    if schema is None:
        if config.response_mime_type == "application/json":
            return {"type": "json_object"}
        return None
    title = schema.get("title") if isinstance(schema, dict) else None
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", title)[:64] if isinstance(title, str) else "response"
    return {"type": "json_schema", "json_schema": {"name": name or "response", "schema": schema}}


def _tool_choice(config: types.GenerateContentConfig) -> str | dict[str, Any]:
    """The agent's function-calling mode; ``"auto"`` when it set none (OpenAI's default, sent
    because some servers otherwise treat a request as one without tools)."""
    calling = config.tool_config.function_calling_config if config.tool_config else None
    if calling is None or calling.mode is None:
        return "auto"
    mode = calling.mode
    if mode == types.FunctionCallingConfigMode.NONE:
        return "none"
    if mode == types.FunctionCallingConfigMode.ANY:
        allowed = calling.allowed_function_names or []
        if len(allowed) == 1:
            return {"type": "function", "function": {"name": allowed[0]}}
        return "required"
    return "auto"


# --- response ------------------------------------------------------------------------------


@dataclass
class _ToolCall:
    id: str
    name: str
    arguments: str


def _response_from_completion(completion: ChatCompletion) -> LlmResponse:
    usage = _usage(completion.usage)
    if not completion.choices:
        return LlmResponse(
            error_code="UNKNOWN_ERROR",
            error_message="the model returned no choices",
            usage_metadata=usage,
            model_version=completion.model or None,
        )
    choice = completion.choices[0]
    message = choice.message
    calls = []
    for tool_call in message.tool_calls or []:
        # Read by duck typing: OpenAI-compatible servers do not all send "type": "function".
        function = getattr(tool_call, "function", None)
        if function is None:
            continue
        calls.append(
            _ToolCall(
                id=tool_call.id or _new_call_id(),
                name=getattr(function, "name", None) or "",
                arguments=getattr(function, "arguments", None) or "",
            )
        )
    return _final_response(
        text=message.content or message.refusal or "",
        calls=calls,
        finish_reason=choice.finish_reason,
        usage=usage,
        model_version=completion.model or None,
    )


@dataclass
class _StreamAssembler:
    """Collects a stream's chunks: text, tool calls (by index), finish reason and usage."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _ToolCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: CompletionUsage | None = None
    model: str | None = None

    def add(self, chunk: ChatCompletionChunk) -> LlmResponse | None:
        """Take one chunk; the partial response showing its text, if it has any."""
        return _partial_text(self.take(chunk), chunk.model)

    def take(self, chunk: ChatCompletionChunk) -> str:
        """Record one chunk; its text delta ('' when it has none)."""
        self.model = chunk.model or self.model
        if chunk.usage is not None:
            self.usage = chunk.usage
        delta_text = ""
        for choice in chunk.choices:
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
            delta = choice.delta
            delta_text += delta.content or delta.refusal or ""
            for tool_delta in delta.tool_calls or []:
                index = tool_delta.index if tool_delta.index is not None else len(self.calls)
                call = self.calls.setdefault(index, _ToolCall(id="", name="", arguments=""))
                if tool_delta.id:
                    call.id = tool_delta.id
                if tool_delta.function is not None:
                    if tool_delta.function.name:
                        call.name = tool_delta.function.name
                    call.arguments += tool_delta.function.arguments or ""
        self.text.append(delta_text)
        return delta_text

    def final(self) -> LlmResponse:
        """The whole reply; a stream that brought nothing (no text, no tool call, no
        finish reason: the server failed) raises ``_EmptyStreamError``."""
        if not self.calls and not self.finish_reason and not "".join(self.text):
            raise _EmptyStreamError()
        return self.response()

    def response(self) -> LlmResponse:
        calls = [self.calls[index] for index in sorted(self.calls)]
        for call in calls:
            call.id = call.id or _new_call_id()
        return _final_response(
            text="".join(self.text),
            calls=calls,
            finish_reason=self.finish_reason,
            usage=_usage(self.usage),
            model_version=self.model,
            turn_complete=True,
        )


def _partial_text(text: str, model: str | None) -> LlmResponse | None:
    """The partial response showing a chunk's text (None for a chunk without any)."""
    if not text:
        return None
    return LlmResponse(
        partial=True,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        model_version=model or None,
    )


def _final_response(
    *,
    text: str,
    calls: list[_ToolCall],
    finish_reason: str | None,
    usage: types.GenerateContentResponseUsageMetadata | None,
    model_version: str | None,
    turn_complete: bool | None = None,
    thoughts: list[types.Part] | None = None,
) -> LlmResponse:
    """The one non-partial response of a call: its thought parts, text and function calls,
    or an error."""
    text_parts = [*(thoughts or []), *([types.Part(text=text)] if text else [])]
    reason = _FINISH_REASONS.get(finish_reason or "")
    if finish_reason and reason is None:
        reason = types.FinishReason.OTHER
    call_parts = []
    for call in calls:
        args = _arguments(call.arguments)
        if args is None:
            return LlmResponse(
                content=types.Content(role="model", parts=text_parts) if text_parts else None,
                error_code="MALFORMED_FUNCTION_CALL",
                error_message=f"the model called tool {call.name!r} (call id {call.id!r}) with "
                f"arguments that are not a JSON object: {call.arguments[:200]!r}. The tool was "
                "not run; run the turn again, or use a model that follows the tool schema",
                finish_reason=types.FinishReason.MALFORMED_FUNCTION_CALL,
                usage_metadata=usage,
                model_version=model_version,
                turn_complete=turn_complete,
            )
        call_parts.append(
            types.Part(function_call=types.FunctionCall(id=call.id, name=call.name, args=args))
        )
    parts = text_parts + call_parts
    if not text and not call_parts:
        return LlmResponse(
            content=types.Content(role="model", parts=parts) if parts else None,
            error_code=reason.value if reason else "UNKNOWN_ERROR",
            error_message="the model returned no text and no tool calls "
            f"(finish_reason={finish_reason!r})",
            finish_reason=reason,
            usage_metadata=usage,
            model_version=model_version,
            turn_complete=turn_complete,
        )
    return LlmResponse(
        content=types.Content(role="model", parts=parts),
        finish_reason=reason,
        usage_metadata=usage,
        model_version=model_version,
        turn_complete=turn_complete,
    )


def _arguments(raw: str) -> dict[str, Any] | None:
    """A tool call's JSON arguments as a dict ('' and null mean none); None if not an object."""
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        return None
    if parsed is None:
        return {}
    return parsed if isinstance(parsed, dict) else None


def _usage(usage: CompletionUsage | None) -> types.GenerateContentResponseUsageMetadata | None:
    if usage is None:
        return None
    details = usage.prompt_tokens_details
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=usage.prompt_tokens,
        candidates_token_count=usage.completion_tokens,
        total_token_count=usage.total_tokens,
        cached_content_token_count=details.cached_tokens if details else None,
    )
