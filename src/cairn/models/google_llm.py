"""Gemini models (``gemini-*``) through google-genai's async client, on the Gemini API or Vertex AI.

cairn's requests and responses are google-genai types already, so contents and
config pass through as they are (Gemini's built-in tools too: ``Tool(google_search=...)``,
code execution, ...). What this adapter adds: credentials from the environment, retries
(rate limits, server errors, timeouts; honouring the wait the server asks for), one
``ModelCallError`` for every failure, streamed chunks merged into one final response
(parts in the order they came), and context caching when the request asks for it
(``GeminiContextCacheManager``).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, NamedTuple

from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from pydantic import Field, PrivateAttr

from cairn.events.cache_metadata import CacheMetadata
from cairn.models.base_llm import BaseLlm
from cairn.models.errors import MissingApiKeyError, ModelCallError
from cairn.models.gemini_context_cache_manager import GeminiContextCacheManager
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.models.retries import (
    Attempts,
    Retry,
    is_retryable_status,
    retried,
    retry_after_seconds,
)
from cairn.models.stream_assembly import assembled

logger = logging.getLogger(__name__)

_FIRST_BACKOFF = 1.0
"""Seconds before the first retry when the server names no wait; doubled on each retry."""
_LONGEST_BACKOFF = 30.0
_MAX_PROVIDER_MESSAGE = 1000
"""Characters of a provider's error message kept (an error page can be long HTML)."""


def _http_library_errors(name: str) -> tuple[type[Exception], ...]:
    """The exception class ``name`` of httpx and of httpx2, whichever are installed.

    google-genai sends with either library (httpx2 by default, or the one of a
    given ``http_client``), and each raises its own exception classes.
    """
    found: list[type[Exception]] = []
    for module_name in ("httpx", "httpx2"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        found.append(getattr(module, name))
    return tuple(found)


_TRANSPORT_ERRORS: tuple[type[Exception], ...] = (
    TimeoutError,
    *_http_library_errors("TransportError"),
)
_TIMEOUT_ERRORS: tuple[type[Exception], ...] = (
    TimeoutError,
    *_http_library_errors("TimeoutException"),
)


class _Backend(NamedTuple):
    client: genai.Client
    provider: str
    """ "gemini" (the Gemini API) or "vertexai"."""
    api_key: str | None
    """Kept to scrub it from error messages."""


class Gemini(BaseLlm):
    """Google's Gemini models, e.g. ``Gemini(model="gemini-2.5-flash")``.

    The API key is ``api_key``, else ``GOOGLE_API_KEY``, else ``GEMINI_API_KEY``.
    With ``GOOGLE_GENAI_USE_VERTEXAI=true`` the call goes to Vertex AI instead,
    in ``GOOGLE_CLOUD_PROJECT`` / ``GOOGLE_CLOUD_LOCATION`` with Google Cloud
    credentials (or in express mode when ``api_key`` is given). Rate limits (429),
    server errors (5xx), timeouts and connection failures are retried up to
    ``max_retries`` times, after the wait the server asks for or an exponential
    backoff; then, or on any other error, ``ModelCallError`` is raised.
    """

    model: str = "gemini-2.5-flash"
    api_key: str | None = Field(default=None, repr=False, exclude=True)
    timeout: float = Field(default=60.0, gt=0)
    """Seconds to wait for the connection and for each read of the response."""
    max_retries: int = Field(default=3, ge=0)
    """Retries after a rate limit, server error, timeout or connection failure."""
    max_retry_wait: float = Field(default=60.0, ge=0)
    """Longest wait between attempts; a server asking for longer fails the call at once."""
    http_client: types.HttpxAsyncClient | None = Field(default=None, exclude=True, repr=False)
    """An ``httpx`` or ``httpx2`` ``AsyncClient`` to send requests with (e.g. with a mock
    transport in tests); by default google-genai makes its own."""
    sleep: Callable[[float], Awaitable[None]] = Field(
        default=asyncio.sleep, exclude=True, repr=False
    )
    """Waits between attempts (replaced in tests so that they do not wait)."""
    clock: Callable[[], float] = Field(default=time.time, exclude=True, repr=False)
    """Epoch seconds now, against which a context cache's expiry is checked (replaced in
    tests that replay recorded caches)."""

    _backend: _Backend | None = PrivateAttr(default=None)

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"gemini-.*"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        backend = self._client()
        model = llm_request.model or self.model
        if not llm_request.contents:
            raise ModelCallError(
                provider=backend.provider,
                model=model,
                status_code=None,
                provider_message="the request has no contents, so google-genai does not send it",
                retryable=False,
                hint="Start the turn with a user message (new_message=...)",
            )
        request, cache_metadata = await self._with_context_cache(backend, llm_request, model)
        call = _Call(
            gemini=self,
            backend=backend,
            model=model,
            contents=list(request.contents),
            config=_without_automatic_function_calling(request.config),
        )
        if not stream:
            response = await call.generate()
            yield _llm_response(response).model_copy(
                update={"turn_complete": True, "cache_metadata": cache_metadata}
            )
            return
        async for reply in assembled(call.stream(), _StreamedTurn(cache_metadata)):
            yield reply

    async def _with_context_cache(
        self, backend: _Backend, llm_request: LlmRequest, model: str
    ) -> tuple[LlmRequest, CacheMetadata | None]:
        """The request to send (a copy naming its cache, when caching is on) and the cache
        metadata its response is to carry; the caller's request is left as it was."""
        if llm_request.cache_config is None:
            return llm_request, None
        request = llm_request.model_copy(
            update={
                "model": model,
                "config": llm_request.config.model_copy(),
                "contents": list(llm_request.contents),
            }
        )
        manager = GeminiContextCacheManager(backend.client, clock=self.clock)
        return request, await manager.handle_context_caching(request)

    def _client(self) -> _Backend:
        """The google-genai client, made on the first call (so a missing key fails the call)."""
        if self._backend is None:
            self._backend = self._new_client()
        return self._backend

    def _new_client(self) -> _Backend:
        http_options = types.HttpOptions(
            timeout=round(self.timeout * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),  # cairn retries (see _Call)
            httpx_async_client=self.http_client,
        )
        if os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").strip().lower() in ("true", "1"):
            if self.api_key:
                client = genai.Client(
                    vertexai=True, api_key=self.api_key, http_options=http_options
                )
            else:
                client = genai.Client(
                    vertexai=True,
                    project=os.environ.get("GOOGLE_CLOUD_PROJECT") or None,
                    location=os.environ.get("GOOGLE_CLOUD_LOCATION") or None,
                    http_options=http_options,
                )
            return _Backend(client, "vertexai", self.api_key)
        api_key = (
            self.api_key
            or os.environ.get("GOOGLE_API_KEY", "").strip()
            or os.environ.get("GEMINI_API_KEY", "").strip()
        )
        if not api_key:
            raise MissingApiKeyError(
                provider="gemini",
                model=self.model,
                env_var="GOOGLE_API_KEY",
                model_class=type(self).__name__,
                hint=(
                    "GEMINI_API_KEY is read too; keys are made at "
                    "https://aistudio.google.com/apikey. For Vertex AI set "
                    "GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT and "
                    "GOOGLE_CLOUD_LOCATION instead"
                ),
            )
        if not os.environ.get("GOOGLE_GENAI_API_VERSION"):
            # v1beta carries every feature cairn sends (parametersJsonSchema, thinking...).
            http_options.api_version = "v1beta"
        client = genai.Client(vertexai=False, api_key=api_key, http_options=http_options)
        return _Backend(client, "gemini", api_key)


class _Call:
    """One model call: the request, its retries, and its errors turned into ModelCallError."""

    def __init__(
        self,
        *,
        gemini: Gemini,
        backend: _Backend,
        model: str,
        contents: list[types.ContentUnion],
        config: types.GenerateContentConfig,
    ) -> None:
        self.gemini = gemini
        self.client = backend.client
        self.provider = backend.provider
        self.api_key = backend.api_key
        self.model = model
        self.contents = contents
        self.config = config

    async def generate(self) -> types.GenerateContentResponse:
        """The whole response, the request tried again as the retry rules allow."""

        async def once() -> AsyncIterator[types.GenerateContentResponse]:
            yield await self.client.aio.models.generate_content(
                model=self.model, contents=self.contents, config=self.config
            )

        async for response in self.retried(once):
            return response
        raise AssertionError("a successful attempt yields its response")  # pragma: no cover

    def stream(self) -> AsyncIterator[types.GenerateContentResponse]:
        """The response chunks; only a failure before the first chunk is retried."""

        async def once() -> AsyncIterator[types.GenerateContentResponse]:
            chunks = await self.client.aio.models.generate_content_stream(
                model=self.model, contents=self.contents, config=self.config
            )
            try:
                async for chunk in chunks:
                    yield chunk
            finally:
                close = getattr(chunks, "aclose", None)
                if close is not None:
                    await close()

        return self.retried(once)

    def retried(
        self, once: Callable[[], AsyncIterator[types.GenerateContentResponse]]
    ) -> AsyncIterator[types.GenerateContentResponse]:
        return retried(
            once,
            self.decide,
            retry_on=(genai_errors.APIError, *_TRANSPORT_ERRORS, ValueError),
            sleep=self.gemini.sleep,
            label=f"{self.provider} model {self.model!r}",
        )

    def decide(self, exc: Exception, attempts: Attempts) -> Retry:
        """Retry 429, 5xx, timeouts and connection failures; raise the call's error otherwise."""
        max_retries = self.gemini.max_retries
        if isinstance(exc, ValueError):
            if attempts.output_shown:
                raise exc
            raise self.request_error(exc) from exc  # google-genai refused to build the request
        if isinstance(exc, genai_errors.APIError):
            if (
                attempts.output_shown
                or not is_retryable_status(exc.code)
                or attempts.number > max_retries
            ):
                raise self.api_error(exc, attempts=attempts.number) from exc
            wait = _server_wait(exc)
            if wait is not None and wait > self.gemini.max_retry_wait:
                raise self.api_error(
                    exc,
                    attempts=attempts.number,
                    hint=(
                        f"The server asked to wait {wait:g}s before retrying, longer than "
                        f"max_retry_wait={self.gemini.max_retry_wait:g}s; retry later or "
                        "raise max_retry_wait"
                    ),
                ) from exc
            reason = f"HTTP {exc.code}"
        else:
            if attempts.output_shown or attempts.number > max_retries:
                raise self.transport_error(exc, attempts=attempts.number) from exc
            wait = None
            reason = "timeout" if isinstance(exc, _TIMEOUT_ERRORS) else "no connection"
        return Retry(
            wait=_backoff(attempts.number) if wait is None else wait,
            reason=reason,
            limits=f"of {max_retries}",
        )

    def api_error(
        self, exc: genai_errors.APIError, *, attempts: int, hint: str = ""
    ) -> ModelCallError:
        message = exc.message or str(exc.details)
        if exc.status:
            message = f"{message} ({exc.status})"
        return ModelCallError(
            provider=self.provider,
            model=self.model,
            status_code=exc.code,
            provider_message=self.redacted(message),
            retryable=is_retryable_status(exc.code),
            attempts=attempts,
            hint=hint or self.hint(exc),
        )

    def request_error(self, exc: ValueError) -> ModelCallError:
        """google-genai would not send the request (nothing was sent): say what it refused."""
        message = str(exc)
        if "only supported in" in message and self.provider == "gemini":
            hint = (
                "This tool or setting exists on Vertex AI only: set "
                "GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT and "
                "GOOGLE_CLOUD_LOCATION (or an api_key for Vertex AI express mode)"
            )
        else:
            hint = "Fix the request's config or contents as the message says"
        return ModelCallError(
            provider=self.provider,
            model=self.model,
            status_code=None,
            provider_message=self.redacted(f"google-genai refused the request: {message}"),
            retryable=False,
            hint=hint,
        )

    def transport_error(self, exc: Exception, *, attempts: int) -> ModelCallError:
        if isinstance(exc, _TIMEOUT_ERRORS):
            message = f"no response within timeout={self.gemini.timeout:g}s ({type(exc).__name__})"
            hint = "Retry later, or give the model a longer timeout=... (or more max_retries=...)"
        else:
            message = f"{type(exc).__name__}: {exc}"
            hint = "Check the network connection (and any proxy) to the API, then retry"
        return ModelCallError(
            provider=self.provider,
            model=self.model,
            status_code=None,
            provider_message=self.redacted(message),
            retryable=True,
            attempts=attempts,
            hint=hint,
        )

    def hint(self, exc: genai_errors.APIError) -> str:
        """What to do about an HTTP error, by status."""
        code = exc.code
        if "API_KEY_INVALID" in _error_reasons(exc.details) or code in (401, 403):
            if self.provider == "vertexai":
                return (
                    "Check the Google Cloud credentials and that the Vertex AI API is enabled "
                    "in GOOGLE_CLOUD_PROJECT"
                )
            return "Check the API key (api_key=..., GOOGLE_API_KEY or GEMINI_API_KEY)"
        if code == 404:
            return (
                "Check the model name; the available models are listed at "
                "https://ai.google.dev/gemini-api/docs/models"
            )
        if code == 429:
            return (
                "The rate limit or quota is used up: retry later, send fewer requests, or raise "
                "the quota (max_retries=... sets how often cairn retries)"
            )
        if code >= 500:
            return "The service failed or is overloaded: retry later (max_retries=...)"
        if code == 400:
            return "Fix the request: the provider's message names the field it rejects"
        return ""

    def redacted(self, text: str) -> str:
        """``text`` cut to a readable length, without the API key if it appears in it."""
        if self.api_key:
            text = text.replace(self.api_key, "[API key]")
        if len(text) > _MAX_PROVIDER_MESSAGE:
            text = text[:_MAX_PROVIDER_MESSAGE] + "..."
        return text


def _without_automatic_function_calling(
    config: types.GenerateContentConfig,
) -> types.GenerateContentConfig:
    """The config, with google-genai's own function calling off: cairn runs the tools."""
    if config.automatic_function_calling is not None:
        return config
    return config.model_copy(
        update={"automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True)}
    )


def _backoff(attempts: int) -> float:
    """Exponential backoff with jitter: about 1 s, 2 s, 4 s ... up to 30 s."""
    return min(_LONGEST_BACKOFF, _FIRST_BACKOFF * 2.0 ** (attempts - 1)) * random.uniform(0.5, 1.0)


def _server_wait(exc: genai_errors.APIError) -> float | None:
    """Seconds the server asked to wait: the Retry-After header, else a RetryInfo detail."""
    headers: Mapping[str, str] = getattr(exc.response, "headers", None) or {}
    seconds = retry_after_seconds(headers)
    if seconds is not None:
        return seconds
    for detail in _error_details(exc.details):
        if str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            delay = detail.get("retryDelay")
            if isinstance(delay, str) and delay.endswith("s"):
                try:
                    return max(0.0, float(delay[:-1]))
                except ValueError:
                    return None
    return None


def _error_details(body: Any) -> list[dict[str, Any]]:
    """The ``error.details`` entries of a google.rpc error body."""
    error = body.get("error", body) if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    return [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []


def _error_reasons(body: Any) -> set[str]:
    """The ``reason`` of each google.rpc.ErrorInfo detail (e.g. ``API_KEY_INVALID``)."""
    return {str(d["reason"]) for d in _error_details(body) if "reason" in d}


def _llm_response(response: types.GenerateContentResponse) -> LlmResponse:
    """``LlmResponse.create``, with two corrections.

    A candidate that finished with STOP but holds no content is an empty reply,
    not an error; and an error code is the reason's name (``"SAFETY"``), not
    Python's spelling of the enum member (``"FinishReason.SAFETY"``).
    """
    candidate = response.candidates[0] if response.candidates else None
    empty = candidate is not None and not (candidate.content and candidate.content.parts)
    if candidate is not None and empty and candidate.finish_reason == types.FinishReason.STOP:
        return LlmResponse(
            content=candidate.content,
            grounding_metadata=candidate.grounding_metadata,
            url_context_metadata=candidate.url_context_metadata,
            usage_metadata=response.usage_metadata,
            finish_reason=candidate.finish_reason,
            citation_metadata=candidate.citation_metadata,
            model_version=response.model_version,
        )
    llm_response = LlmResponse.create(response)
    if llm_response.error_code is not None:
        reason: types.FinishReason | types.BlockedReason | None = None
        if candidate is not None:
            reason = candidate.finish_reason
        elif response.prompt_feedback is not None:
            reason = response.prompt_feedback.block_reason
        if reason is not None:
            return llm_response.model_copy(update={"error_code": reason.value})
    return llm_response


class _StreamedTurn:
    """Streamed chunks merged into one reply.

    Parts stay in the order they came; consecutive text of one kind (thought or answer)
    is joined into one part, keeping its thought signature. Function calls, code and its
    results, images and the like are kept whole. The final response has the latest usage,
    finish reason and grounding the chunks held.
    """

    def __init__(self, cache_metadata: CacheMetadata | None = None) -> None:
        self.cache_metadata = cache_metadata
        """What the final response carries about the context cache the call used."""
        self.parts: list[types.Part] = []
        self.text: list[str] = []
        """The text run being joined (of kind ``text_thought``)."""
        self.text_thought: bool | None = None
        """None: no text run is open."""
        self.text_signature: bytes | None = None
        self.last: LlmResponse | None = None
        self.finish_reason: types.FinishReason | None = None
        self.model_version: str | None = None
        self.usage: types.GenerateContentResponseUsageMetadata | None = None
        self.grounding: types.GroundingMetadata | None = None
        self.url_context: types.UrlContextMetadata | None = None
        self.citations: types.CitationMetadata | None = None

    def add(self, chunk: types.GenerateContentResponse) -> LlmResponse | None:
        """Record one chunk; return the partial response showing its text (None if it has none)."""
        response = _llm_response(chunk)
        self.last = response
        self.finish_reason = response.finish_reason or self.finish_reason
        self.model_version = response.model_version or self.model_version
        self.usage = response.usage_metadata or self.usage
        self.grounding = response.grounding_metadata or self.grounding
        self.url_context = response.url_context_metadata or self.url_context
        self.citations = response.citation_metadata or self.citations
        text_parts: list[types.Part] = []
        for part in (response.content.parts if response.content else None) or []:
            if part.text is None or _has_more_than_text(part):
                self._close_text()
                self.parts.append(part)
                continue
            thought = bool(part.thought)
            if self.text_thought is not None and self.text_thought != thought:
                self._close_text()
            self.text.append(part.text)
            self.text_thought = thought
            self.text_signature = part.thought_signature or self.text_signature
            if part.text:
                text_parts.append(types.Part(text=part.text, thought=part.thought))
        if not text_parts:
            return None
        return LlmResponse(
            content=types.Content(role="model", parts=text_parts),
            partial=True,
            model_version=response.model_version,
        )

    def _close_text(self) -> None:
        """End the open text run: its joined text becomes one part."""
        text = "".join(self.text)
        if text or self.text_signature:
            self.parts.append(
                types.Part(
                    text=text,
                    thought=True if self.text_thought else None,
                    thought_signature=self.text_signature,
                )
            )
        self.text, self.text_thought, self.text_signature = [], None, None

    def final(self) -> LlmResponse:
        """The whole reply (``turn_complete=True``); an error response when there was none."""
        self._close_text()
        parts = self.parts
        last = self.last
        if last is None:
            return LlmResponse(
                error_code="UNKNOWN_ERROR",
                error_message="the model's stream ended without a response",
                turn_complete=True,
                cache_metadata=self.cache_metadata,
            )
        return LlmResponse(
            content=types.Content(role="model", parts=parts) if parts else last.content,
            grounding_metadata=self.grounding,
            url_context_metadata=self.url_context,
            citation_metadata=self.citations,
            usage_metadata=self.usage,
            finish_reason=self.finish_reason,
            error_code=None if parts else last.error_code,
            error_message=None if parts else last.error_message,
            model_version=self.model_version,
            turn_complete=True,
            cache_metadata=self.cache_metadata,
        )


def _has_more_than_text(part: types.Part) -> bool:
    """A part that carries something besides (thought) text and its signature."""
    fields = part.model_dump(exclude_none=True, exclude={"text", "thought", "thought_signature"})
    return bool(fields)
