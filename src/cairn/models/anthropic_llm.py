"""Claude through Anthropic's Messages API: ``anthropic/<model>`` and ``claude-*`` model strings.

The request is translated from google-genai contents to Anthropic messages
(alternating user/assistant turns, tool calls as ``tool_use`` and
``tool_result`` blocks) and the reply back to an ``LlmResponse``. Rate limits,
overload and server errors are retried here with backoff that honours
``retry-after``; every other failure is a ``ModelCallError``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib
import json
import os
import random
import re
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast

import anthropic
from google.genai import types
from pydantic import Field, PrivateAttr

from cairn.models.base_llm import BaseLlm
from cairn.models.errors import MissingApiKeyError, ModelCallError
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

if TYPE_CHECKING:
    # The pydantic plugin writes AnthropicGenerateContentConfig's __init__ with genai's own
    # annotations, one of which names this (genai's alias for a PIL image).
    from google.genai.types import PIL_Image  # noqa: F401

PROVIDER = "anthropic"
API_KEY_ENV = "ANTHROPIC_API_KEY"
CONTINUATION_PLACEHOLDER = "(conversation continues)"
"""The user turn put before a conversation that starts with the model (the Messages API needs a
user turn first) and after one that ends with it (so Claude answers in a new turn)."""

_INITIAL_BACKOFF = 1.0
_MAX_BACKOFF = 30.0
_MAX_RETRY_AFTER = 60.0
"""A ``retry-after`` longer than this is waited for only this long before the next attempt."""

_FINISH_REASONS: dict[str, types.FinishReason] = {
    "end_turn": types.FinishReason.STOP,
    "tool_use": types.FinishReason.STOP,
    "stop_sequence": types.FinishReason.STOP,
    "pause_turn": types.FinishReason.STOP,
    "max_tokens": types.FinishReason.MAX_TOKENS,
    "model_context_window_exceeded": types.FinishReason.MAX_TOKENS,
    "refusal": types.FinishReason.SAFETY,
}

# The HTTP status an ``error`` event inside a 200 stream stands for, by its ``error.type``.
_STATUS_OF_ERROR_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}

_HINTS = {
    400: "Anthropic rejected the request as built; fix what the message names (model, "
    "max_tokens=..., a tool's schema, the conversation's turns).",
    401: f"Check the API key: set {API_KEY_ENV} or pass api_key=... to AnthropicLlm.",
    402: "The Anthropic account behind the key needs billing attention.",
    403: "The API key may not use this model or feature; check its workspace permissions.",
    404: "Check the model name: 'anthropic/<model>' sends '<model>' to the API.",
    413: "The request is too large; send fewer or shorter contents.",
}

_TOOL_ID_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def _http_errors(name: str) -> tuple[type[Exception], ...]:
    """``name`` from the HTTP libraries the SDK may use (``httpx2`` now, ``httpx`` before): a
    stream that breaks mid-way raises the library's own error, not an SDK one."""
    found: list[type[Exception]] = []
    for library in ("httpx2", "httpx"):
        try:
            found.append(getattr(importlib.import_module(library), name))
        except ImportError:
            continue
    return tuple(found)


_TIMEOUTS: tuple[type[Exception], ...] = (
    anthropic.APITimeoutError,
    *_http_errors("TimeoutException"),
)
_CONNECTION_FAILURES: tuple[type[Exception], ...] = (
    anthropic.APIConnectionError,
    *_http_errors("TransportError"),
)


def _api_model_name(model: str) -> str:
    """``anthropic/claude-x`` -> ``claude-x``; a bare ``claude-*`` name is sent as is."""
    return model.removeprefix("anthropic/")


# ---------------------------------------------------------------- request: genai -> Anthropic


def _tool_use_id(call_id: str) -> str:
    """Anthropic accepts tool_use ids of ``[a-zA-Z0-9_-]`` only."""
    return _TOOL_ID_UNSAFE.sub("_", call_id)


class _ToolIds:
    """Ids for function calls and responses that came without one (e.g. from another model),
    paired by function name in order, so each tool_result names its tool_use."""

    def __init__(self) -> None:
        self._count = 0
        self._unanswered: dict[str, list[str]] = {}

    def for_call(self, call: types.FunctionCall) -> str:
        if call.id:
            return _tool_use_id(call.id)
        self._count += 1
        made = f"toolu_cairn_{self._count}"
        self._unanswered.setdefault(call.name or "", []).append(made)
        return made

    def for_response(self, response: types.FunctionResponse) -> str:
        if response.id:
            return _tool_use_id(response.id)
        waiting = self._unanswered.get(response.name or "")
        if waiting:
            return waiting.pop(0)
        self._count += 1
        return f"toolu_cairn_{self._count}"


def _blocks(content: types.Content, ids: _ToolIds) -> list[dict[str, Any]]:
    """Anthropic content blocks for one genai Content (thoughts and empty text left out)."""
    blocks: list[dict[str, Any]] = []
    for part in content.parts or []:
        if part.function_call is not None:
            call = part.function_call
            blocks.append(
                {
                    "type": "tool_use",
                    "id": ids.for_call(call),
                    "name": call.name,
                    "input": call.args or {},
                }
            )
        elif part.function_response is not None:
            answer = part.function_response
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": ids.for_response(answer),
                    "content": json.dumps(answer.response or {}, ensure_ascii=False),
                }
            )
        elif part.text and not part.thought:
            blocks.append({"type": "text", "text": part.text})
        elif part.inline_data is not None and part.inline_data.data is not None:
            blocks.append(_media_block(part.inline_data))
    return blocks


def _media_block(blob: types.Blob) -> dict[str, Any]:
    """An image or PDF as a base64 block (the two kinds of media the Messages API takes inline)."""
    mime = blob.mime_type or ""
    kind = "document" if mime == "application/pdf" else "image"
    if kind == "image" and not mime.startswith("image/"):
        raise ValueError(
            f"AnthropicLlm cannot send inline data of type {mime!r}: the Messages API takes "
            "images (image/jpeg, image/png, image/gif, image/webp) and PDFs (application/pdf). "
            "Convert the part to text, or leave it out of the request."
        )
    data = base64.b64encode(blob.data or b"").decode("ascii")
    return {"type": kind, "source": {"type": "base64", "media_type": mime, "data": data}}


def _placeholder_turn() -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": CONTINUATION_PLACEHOLDER}]}


def _messages(contents: list[types.Content]) -> list[dict[str, Any]]:
    """Alternating user/assistant messages, starting and ending with a user turn.

    Consecutive contents of one role are merged into one message, and in a user
    message the tool_result blocks come first, as the Messages API requires.
    """
    ids = _ToolIds()
    messages: list[dict[str, Any]] = []
    for content in contents:
        role = "assistant" if content.role == "model" else "user"
        blocks = _blocks(content, ids)
        if not blocks:
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    for message in messages:
        if message["role"] == "user":
            message["content"].sort(key=lambda block: block["type"] != "tool_result")
    if not messages or messages[0]["role"] != "user":
        messages.insert(0, _placeholder_turn())
    if messages[-1]["role"] != "user":
        # Ending on an assistant turn would ask Claude to extend that turn (prefill), which
        # newer models refuse; an agent wants a new turn.
        messages.append(_placeholder_turn())
    return messages


_ONE_HOUR = 3600
"""The longest a prompt cache lives (Anthropic offers five minutes, the default, or an hour)."""


def _mark_cache_breakpoints(params: dict[str, Any], llm_request: LlmRequest) -> None:
    """Prompt caching, as ADK does it for Claude when the App has a ``ContextCacheConfig``.

    Claude reads tools, then the system prompt, then the messages; a ``cache_control``
    breakpoint on the last tool, on the system prompt and on the last message block caches
    each prefix, so a change further down leaves the levels above it cached. A
    ``ttl_seconds`` of an hour or more asks for the hour-long cache. No breakpoint when the
    previous prompt measured fewer than ``min_tokens`` tokens.
    """
    config = llm_request.cache_config
    if config is None:
        return
    measured = llm_request.cacheable_contents_token_count
    if measured is not None and measured < config.min_tokens:
        return
    marker: dict[str, str] = {"type": "ephemeral"}
    if config.ttl_seconds >= _ONE_HOUR:
        marker["ttl"] = "1h"
    if params.get("tools"):
        params["tools"][-1]["cache_control"] = marker
    if isinstance(params.get("system"), str):
        params["system"] = [{"type": "text", "text": params["system"], "cache_control": marker}]
    for message in reversed(params["messages"]):
        if message["content"]:
            message["content"][-1]["cache_control"] = marker
            return


def _json_schema(node: dict[str, Any]) -> dict[str, Any]:
    """A dumped genai ``Schema`` (OpenAPI flavour, upper-case types) as JSON Schema."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "propertyOrdering":
            continue
        if key == "type":
            if isinstance(value, str) and value != "TYPE_UNSPECIFIED":
                out["type"] = value.lower()
        elif key in ("properties", "defs"):
            out["$defs" if key == "defs" else key] = {
                name: _json_schema(sub) for name, sub in value.items()
            }
        elif key == "items" or (key == "additionalProperties" and isinstance(value, dict)):
            out[key] = _json_schema(value)
        elif key == "anyOf":
            out[key] = [_json_schema(sub) for sub in value]
        elif key == "ref":
            out["$ref"] = value
        elif key != "nullable":
            out[key] = value
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    return out


def _tool(declaration: types.FunctionDeclaration) -> dict[str, Any]:
    schema: Any
    if declaration.parameters_json_schema is not None:
        schema = declaration.parameters_json_schema
    elif declaration.parameters is not None:
        dumped = declaration.parameters.model_dump(mode="json", exclude_none=True, by_alias=True)
        schema = _json_schema(dumped)
    else:
        schema = {"type": "object", "properties": {}}
    return {
        "name": declaration.name,
        "description": declaration.description or "",
        "input_schema": schema,
    }


def _tool_choice(config: types.GenerateContentConfig) -> dict[str, Any] | None:
    calling = config.tool_config.function_calling_config if config.tool_config else None
    if calling is None or calling.mode is None:
        return None
    if calling.mode == types.FunctionCallingConfigMode.NONE:
        return {"type": "none"}
    if calling.mode == types.FunctionCallingConfigMode.ANY:
        names = calling.allowed_function_names or []
        return {"type": "tool", "name": names[0]} if len(names) == 1 else {"type": "any"}
    return None


# ---------------------------------------------------------------- response: Anthropic -> genai


def _usage(
    input_tokens: int | None,
    cache_creation: int | None,
    cache_read: int | None,
    output_tokens: int | None,
) -> types.GenerateContentResponseUsageMetadata:
    """Anthropic counts cached prompt tokens apart from ``input_tokens``; genai counts them in."""
    prompt = (input_tokens or 0) + (cache_creation or 0) + (cache_read or 0)
    output = output_tokens or 0
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=output,
        total_token_count=prompt + output,
        cached_content_token_count=cache_read or None,
    )


def _finish_reason(stop_reason: str | None) -> types.FinishReason | None:
    if stop_reason is None:
        return None
    return _FINISH_REASONS.get(stop_reason, types.FinishReason.OTHER)


def _final_response(
    *,
    model: str,
    parts: list[types.Part],
    stop_reason: str | None,
    usage: types.GenerateContentResponseUsageMetadata | None,
    model_version: str | None,
) -> LlmResponse:
    """The whole reply; with no parts it carries an error naming the stop reason instead."""
    finish_reason = _finish_reason(stop_reason)
    if parts:
        return LlmResponse(
            content=types.Content(role="model", parts=parts),
            finish_reason=finish_reason,
            usage_metadata=usage,
            model_version=model_version,
            turn_complete=True,
        )
    return LlmResponse(
        error_code=finish_reason.value if finish_reason else "UNKNOWN_ERROR",
        error_message=f"anthropic model {model!r} returned no content "
        f"(stop_reason {stop_reason!r})",
        finish_reason=finish_reason,
        usage_metadata=usage,
        model_version=model_version,
        turn_complete=True,
    )


def _parts_of_message(message: Any) -> list[types.Part]:
    parts: list[types.Part] = []
    for block in message.content:
        if block.type == "text" and block.text:
            parts.append(types.Part(text=block.text))
        elif block.type == "tool_use":
            call = types.FunctionCall(id=block.id, name=block.name, args=dict(block.input or {}))
            parts.append(types.Part(function_call=call))
    return parts


class _StreamAssembler:
    """Turns the Messages API event stream into partial chunks and one whole reply."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.model_version: str | None = None
        self.stop_reason: str | None = None
        self.input_tokens: int | None = None
        self.cache_creation: int | None = None
        self.cache_read: int | None = None
        self.output_tokens: int | None = None
        self._blocks: dict[int, dict[str, Any]] = {}

    def _take_usage(self, usage: Any) -> None:
        for name in ("input_tokens", "output_tokens"):
            if getattr(usage, name, None) is not None:
                setattr(self, name, getattr(usage, name))
        if getattr(usage, "cache_creation_input_tokens", None) is not None:
            self.cache_creation = usage.cache_creation_input_tokens
        if getattr(usage, "cache_read_input_tokens", None) is not None:
            self.cache_read = usage.cache_read_input_tokens

    def add(self, event: Any) -> LlmResponse | None:
        """Take one stream event; a partial response when it carries text."""
        kind = event.type
        if kind == "message_start":
            self.model_version = event.message.model
            self._take_usage(event.message.usage)
        elif kind == "content_block_start":
            block = event.content_block
            if block.type == "text":
                self._blocks[event.index] = {"type": "text", "text": [block.text or ""]}
                return self._text_chunk(block.text)
            if block.type == "tool_use":
                self._blocks[event.index] = {
                    "type": "tool_use",
                    "id": block.id,
                    "name": block.name,
                    "json": [],
                    "input": block.input,
                }
        elif kind == "content_block_delta":
            block_state = self._blocks.get(event.index)
            delta = event.delta
            if block_state is None:
                return None
            if delta.type == "text_delta" and block_state["type"] == "text":
                block_state["text"].append(delta.text)
                return self._text_chunk(delta.text)
            if delta.type == "input_json_delta" and block_state["type"] == "tool_use":
                block_state["json"].append(delta.partial_json)
        elif kind == "message_delta":
            if event.delta.stop_reason is not None:
                self.stop_reason = event.delta.stop_reason
            self._take_usage(event.usage)
        return None

    @staticmethod
    def _text_chunk(text: str | None) -> LlmResponse | None:
        if not text:
            return None
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=text)]), partial=True
        )

    def _tool_input(self, block: dict[str, Any]) -> dict[str, Any]:
        raw = "".join(block["json"])
        if not raw:
            return dict(block["input"] or {})
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ModelCallError(
                provider=PROVIDER,
                model=self.model,
                status_code=None,
                provider_message=f"the streamed input of tool call {block['name']!r} "
                f"({block['id']}) is not valid JSON: {exc}",
                retryable=True,
                hint="Call the model again.",
            ) from exc
        return value if isinstance(value, dict) else {"value": value}

    def final(self) -> LlmResponse:
        parts: list[types.Part] = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            if block["type"] == "text":
                text = "".join(block["text"])
                if text:
                    parts.append(types.Part(text=text))
            else:
                call = types.FunctionCall(
                    id=block["id"], name=block["name"], args=self._tool_input(block)
                )
                parts.append(types.Part(function_call=call))
        has_usage = self.input_tokens is not None or self.output_tokens is not None
        usage = (
            _usage(self.input_tokens, self.cache_creation, self.cache_read, self.output_tokens)
            if has_usage
            else None
        )
        return _final_response(
            model=self.model,
            parts=parts,
            stop_reason=self.stop_reason,
            usage=usage,
            model_version=self.model_version,
        )


# ---------------------------------------------------------------- errors and retries


def _status_of(exc: anthropic.APIStatusError) -> int:
    """The HTTP status, or for an ``error`` event inside a 200 stream the status it stands for."""
    if exc.status_code >= 400:
        return exc.status_code
    error = exc.body.get("error") if isinstance(exc.body, dict) else None
    error_type = error.get("type") if isinstance(error, dict) else None
    return _STATUS_OF_ERROR_TYPE.get(str(error_type), 500)


def _provider_message(exc: anthropic.APIStatusError) -> str:
    """``<error.type>: <error.message>`` from the body, with the request id when there is one."""
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error")
    if isinstance(error, dict) and error.get("message"):
        message = f"{error.get('type', 'error')}: {error['message']}"
    else:
        message = exc.message
    request_id = body.get("request_id") or exc.response.headers.get("request-id")
    return f"{message} (request-id {request_id})" if request_id else message


def _describe(exc: Exception) -> str:
    """The underlying network error (the SDK wraps it), by type and text."""
    cause = exc.__cause__ or exc
    return f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__


class AnthropicLlm(BaseLlm):
    """Claude models through Anthropic's Messages API.

    ``AnthropicLlm(model="anthropic/claude-sonnet-4-6")`` or a ``claude-*`` name.
    The key comes from ``api_key`` or the ``ANTHROPIC_API_KEY`` environment
    variable, read at the first call. Status 429, 529 and 5xx are retried up to
    ``max_retries`` times, waiting as ``retry-after`` asks or with exponential
    backoff.
    """

    model: str
    api_key: str | None = Field(default=None, repr=False, exclude=True)
    base_url: str | None = None
    max_tokens: int = 4096
    """Sent when the request's ``config.max_output_tokens`` is unset (the API requires one)."""
    timeout: float = 60.0
    """Seconds per attempt; a timeout is a ``ModelCallError`` and is not retried."""
    max_retries: int = 3
    http_client: Any = Field(default=None, exclude=True, repr=False)
    """An ``AsyncClient`` of the HTTP library the installed ``anthropic`` SDK uses (``httpx2``
    for current SDKs, ``httpx`` for older ones); tests pass one with a mock transport."""
    sleep: Callable[[float], Awaitable[None]] = Field(
        default=asyncio.sleep, exclude=True, repr=False
    )
    """How to wait between attempts (tests pass one that records the wait and returns)."""

    _client: anthropic.AsyncAnthropic | None = PrivateAttr(default=None)

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"anthropic/.+", r"claude-.*"]

    def _sdk_client(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            api_key = self.api_key or os.environ.get(API_KEY_ENV)
            if not api_key:
                raise MissingApiKeyError(provider=PROVIDER, model=self.model, env_var=API_KEY_ENV)
            self._client = anthropic.AsyncAnthropic(
                api_key=api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=0,  # retried here, so that the policy and its waits are testable
                http_client=self.http_client,
            )
        return self._client

    def _request_params(self, llm_request: LlmRequest) -> dict[str, Any]:
        """The Messages API body (sampling settings go in ``extra_body``: not every SDK version
        declares them, and newer models reject some of them, which the API then says)."""
        config = llm_request.config
        params: dict[str, Any] = {
            "model": _api_model_name(llm_request.model or self.model),
            "max_tokens": config.max_output_tokens or self.max_tokens,
            "messages": _messages(llm_request.contents),
        }
        if system := llm_request.system_instruction_text:
            params["system"] = system
        if declarations := llm_request.function_declarations:
            params["tools"] = [_tool(d) for d in declarations]
            if (choice := _tool_choice(config)) is not None:
                params["tool_choice"] = choice
        if config.stop_sequences:
            params["stop_sequences"] = list(config.stop_sequences)
        sampling = {
            "temperature": config.temperature,
            "top_p": config.top_p,
            "top_k": int(config.top_k) if config.top_k is not None else None,
        }
        extra: dict[str, Any] = {k: v for k, v in sampling.items() if v is not None}
        if isinstance(config, AnthropicGenerateContentConfig) and config.effort:
            # As ADK: the effort level goes in output_config, and Claude then takes no
            # sampling settings.
            extra = {"output_config": {"effort": config.effort}}
        if extra:
            params["extra_body"] = extra
        _mark_cache_breakpoints(params, llm_request)
        return params

    def _backoff(self, retry_index: int, headers: Mapping[str, str]) -> float:
        asked = retry_after_seconds(headers)
        if asked is not None:
            return min(asked, _MAX_RETRY_AFTER)
        ceiling = min(_MAX_BACKOFF, _INITIAL_BACKOFF * 2.0**retry_index)
        return ceiling * (0.75 + 0.25 * random.random())

    def _status_error(
        self, exc: anthropic.APIStatusError, attempts: int, after_output: bool
    ) -> ModelCallError:
        status = _status_of(exc)
        retryable = is_retryable_status(status)
        if after_output:
            hint = "The stream failed after partial output was yielded; call the model again."
        elif retryable:
            hint = (
                f"Tried {attempts} times; wait and call again, or give AnthropicLlm a larger "
                "max_retries=..."
            )
        else:
            hint = _HINTS.get(status, "")
        return ModelCallError(
            provider=PROVIDER,
            model=self.model,
            status_code=status,
            provider_message=_provider_message(exc),
            retryable=retryable,
            attempts=attempts,
            hint=hint,
        )

    def _decide(self, exc: Exception, attempts: Attempts) -> Retry:
        """Retry 429, 529, 5xx and connection failures (not a timeout: it already waited
        ``timeout``); raise the call's ModelCallError otherwise."""
        if isinstance(exc, anthropic.APIStatusError):
            error = self._status_error(exc, attempts.number, after_output=attempts.output_shown)
            if not error.retryable or attempts.output_shown or attempts.number > self.max_retries:
                raise error from exc
            return Retry(
                wait=self._backoff(attempts.number - 1, exc.response.headers),
                reason=f"HTTP {error.status_code}",
                limits=f"of {self.max_retries}",
            )
        if isinstance(exc, _TIMEOUTS):
            raise ModelCallError(
                provider=PROVIDER,
                model=self.model,
                status_code=None,
                provider_message=f"no response within {self.timeout:g}s",
                retryable=True,
                attempts=attempts.number,
                hint="Give AnthropicLlm a longer timeout=... (seconds), or a smaller max_tokens.",
            ) from exc
        if attempts.output_shown or attempts.number > self.max_retries:
            raise ModelCallError(
                provider=PROVIDER,
                model=self.model,
                status_code=None,
                provider_message=f"connection failed: {_describe(exc)}",
                retryable=True,
                attempts=attempts.number,
                hint="Check the network and base_url=... ('https://api.anthropic.com' unless set).",
            ) from exc
        return Retry(
            wait=self._backoff(attempts.number - 1, {}),
            reason="no connection",
            limits=f"of {self.max_retries}",
        )

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        client = self._sdk_client()
        params = self._request_params(llm_request)

        async def once() -> AsyncIterator[LlmResponse | anthropic.types.Message]:
            if stream:
                async with contextlib.aclosing(self._stream(client, params)) as responses:
                    async for response in responses:
                        yield response
            else:
                yield await client.messages.create(**params)

        message: anthropic.types.Message | None = None
        async for item in retried(
            once,
            self._decide,
            retry_on=(anthropic.APIStatusError, *_TIMEOUTS, *_CONNECTION_FAILURES),
            sleep=self.sleep,
            label=f"{PROVIDER} model {self.model!r}",
        ):
            if isinstance(item, LlmResponse):
                yield item
            else:
                message = item
        if message is None:
            return
        parts = _parts_of_message(message)
        yield _final_response(
            model=self.model,
            parts=parts,
            stop_reason=message.stop_reason,
            usage=_usage(
                message.usage.input_tokens,
                message.usage.cache_creation_input_tokens,
                message.usage.cache_read_input_tokens,
                message.usage.output_tokens,
            ),
            model_version=message.model,
        )

    async def _stream(
        self, client: anthropic.AsyncAnthropic, params: dict[str, Any]
    ) -> AsyncGenerator[LlmResponse, None]:
        events = await client.messages.create(**params, stream=True)
        async for response in assembled(events, _StreamAssembler(self.model)):
            yield response


class AnthropicGenerateContentConfig(types.GenerateContentConfig):
    """A ``GenerateContentConfig`` with Claude's reasoning ``effort`` (ADK's class): set as
    an agent's ``generate_content_config``, ``effort`` is sent as the Messages API's
    ``output_config.effort`` (and temperature, top_p and top_k are then not sent)."""

    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = Field(
        default=None, description="How hard Claude reasons before it answers."
    )


class Claude(AnthropicLlm):
    """ADK's ``Claude``: Claude served from Vertex AI when ``GOOGLE_CLOUD_PROJECT`` and
    ``GOOGLE_CLOUD_LOCATION`` are set (Google Cloud credentials from the environment, model
    names such as ``claude-3-5-sonnet-v2@20241022``), as in ADK; otherwise Anthropic's own
    API, exactly as :class:`AnthropicLlm` (``ANTHROPIC_API_KEY``)."""

    model: str = "claude-3-5-sonnet-v2@20241022"

    def _sdk_client(self) -> anthropic.AsyncAnthropic:
        project = os.environ.get("GOOGLE_CLOUD_PROJECT")
        location = os.environ.get("GOOGLE_CLOUD_LOCATION")
        if not (project and location):
            return super()._sdk_client()
        if self._client is None:
            vertex = anthropic.AsyncAnthropicVertex(
                project_id=project,
                region=location,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=0,  # retried by AnthropicLlm, as for Anthropic's API
                http_client=self.http_client,
            )
            # The Vertex client has the Messages API of AsyncAnthropic, which is all that is used.
            self._client = cast(anthropic.AsyncAnthropic, vertex)
        return self._client
