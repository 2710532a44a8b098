"""OpenAI chat completions as a cairn model: ``openai/<model>``.

Any OpenAI-compatible server works too (vLLM, Ollama, llama.cpp server): give
``base_url=`` (or set ``OPENAI_BASE_URL``) and no API key is needed.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import re
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar, cast

import httpx2
import openai
from google.genai import types
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from pydantic import BaseModel, Field, PrivateAttr, TypeAdapter

from cairn.models.base_llm import BaseLlm
from cairn.models.errors import MissingApiKeyError, ModelCallError
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.models.retries import backoff_seconds, is_retryable_status, retry_after_seconds

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

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


class OpenAILlm(BaseLlm):
    """A model served by the OpenAI chat completions API, or any server speaking it.

    ``OpenAILlm(model="openai/gpt-4o-mini")`` reads ``OPENAI_API_KEY`` (and
    ``OPENAI_BASE_URL``) from the environment; ``base_url=`` without a key
    reaches a local server. Rate limits (429) and server errors (5xx), timeouts
    and connection failures are retried ``max_retries`` times with exponential
    backoff, honouring ``Retry-After``; then, or on any other HTTP error, a
    :class:`~cairn.models.errors.ModelCallError` is raised.
    """

    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False, exclude=True)
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=3, ge=0)
    http_client: httpx2.AsyncClient | None = Field(default=None, repr=False, exclude=True)
    """The HTTP client the SDK sends with (for proxies, custom transports, tests)."""

    # A factory, not default=asyncio.sleep: pydantic would bind a function default as a method.
    _sleep: Callable[[float], Awaitable[None]] = PrivateAttr(default_factory=lambda: asyncio.sleep)
    """How to wait between attempts (tests put a recorder here)."""
    _client_cache: tuple[asyncio.AbstractEventLoop, openai.AsyncOpenAI] | None = PrivateAttr(
        default=None
    )

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"openai/.+"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        client = self._client()
        params = _request_params(llm_request, (llm_request.model or self.model))
        if not stream:
            completion = await self._with_retries(
                client, lambda: client.chat.completions.create(**params)
            )
            yield _response_from_completion(completion)
            return
        chunks = await self._with_retries(
            client,
            lambda: client.chat.completions.create(
                stream=True, stream_options={"include_usage": True}, **params
            ),
        )
        assembler = _StreamAssembler()
        try:
            async for chunk in chunks:
                text = assembler.add(chunk)
                if text:
                    yield LlmResponse(
                        partial=True,
                        content=types.Content(role="model", parts=[types.Part(text=text)]),
                        model_version=chunk.model or None,
                    )
        except (openai.APIError, httpx2.TransportError) as error:
            # Text was already shown: a broken stream is reported, never retried from the start.
            raise self._call_error(error, client, attempts=1, during_stream=True) from error
        finally:
            await chunks.close()
        yield assembler.response()

    def _client(self) -> openai.AsyncOpenAI:
        """The SDK client, made once per event loop (its connection pool belongs to one loop)."""
        loop = asyncio.get_running_loop()
        if self._client_cache is not None and (
            self._client_cache[0] is loop or self.http_client is not None
        ):
            return self._client_cache[1]
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = self.api_key or os.environ.get("OPENAI_API_KEY") or None
        if api_key is None:
            if base_url is None:
                raise MissingApiKeyError(
                    provider=_PROVIDER,
                    model=self.model,
                    env_var="OPENAI_API_KEY",
                    model_class=type(self).__name__,
                    hint="For a local OpenAI-compatible server (vLLM, Ollama, llama.cpp) pass "
                    "base_url=... or set OPENAI_BASE_URL instead; no key is needed then.",
                )
            api_key = _LOCAL_SERVER_KEY
        client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=self.timeout,
            max_retries=0,  # retried here, so that every attempt is counted and logged
            http_client=self.http_client,
        )
        self._client_cache = (loop, client)
        return client

    async def _with_retries(
        self, client: openai.AsyncOpenAI, call: Callable[[], Awaitable[_T]]
    ) -> _T:
        attempt = 1
        while True:
            try:
                return await call()
            except openai.APIStatusError as error:
                if not is_retryable_status(error.status_code) or attempt > self.max_retries:
                    raise self._call_error(error, client, attempts=attempt) from error
                delay = _retry_delay(error.response.headers, attempt)
                reason = f"HTTP {error.status_code}"
            except openai.APIConnectionError as error:  # timeouts included
                if attempt > self.max_retries:
                    raise self._call_error(error, client, attempts=attempt) from error
                delay = _backoff(attempt)
                reason = "timeout" if isinstance(error, openai.APITimeoutError) else "no connection"
            logger.warning(
                "%s model %r: %s, retry %d of %d in %.1fs",
                _PROVIDER,
                self.model,
                reason,
                attempt,
                self.max_retries,
                delay,
            )
            await self._sleep(delay)
            attempt += 1

    def _call_error(
        self,
        error: Exception,
        client: openai.AsyncOpenAI,
        *,
        attempts: int,
        during_stream: bool = False,
    ) -> ModelCallError:
        server = str(client.base_url)
        status: int | None = None
        if isinstance(error, openai.APIStatusError):
            status = error.status_code
            message = _provider_message(error)
            if status in (401, 403):
                hint = (
                    "Check the API key (OPENAI_API_KEY or api_key=) and that it may use this model"
                )
            elif status == 404:
                hint = (
                    f"Check the model name {_model_name(self.model)!r} (the part after "
                    f"'openai/') and the server address {server}"
                )
            elif status == 429:
                hint = (
                    "The provider is rate limiting this key or its quota is used up: wait, lower "
                    "the request rate, or raise max_retries="
                )
            elif status >= 500:
                hint = "The provider failed; try again later, or raise max_retries="
            else:
                hint = "The provider rejected the request; its message says what to change"
        elif isinstance(error, openai.APITimeoutError | httpx2.TimeoutException):
            message = f"no response within timeout={self.timeout}s"
            hint = f"Raise timeout=, or check that {server} is reachable"
        elif isinstance(error, openai.APIConnectionError | httpx2.TransportError):
            cause = error.__cause__ or error
            message = f"no connection to {server}: {type(cause).__name__}: {cause}"
            hint = "Check that the server runs and that base_url (or OPENAI_BASE_URL) is right"
        else:  # an error event inside a stream
            message = _provider_message(error)
            hint = ""
        if during_stream:
            hint = (
                "The stream broke off after output was shown, so it was not retried (that "
                "would show the output twice); run the turn again"
            )
        if client.api_key:  # a server may echo what it was sent; the key is never shown
            message = message.replace(client.api_key, "<api key>")
        return ModelCallError(
            provider=_PROVIDER,
            model=self.model,
            status_code=status,
            provider_message=message,
            retryable=status is None or is_retryable_status(status),
            attempts=attempts,
            hint=hint,
        )


# --- retries -------------------------------------------------------------------------------


def _backoff(attempt: int) -> float:
    """About 0.5 s, 1 s, 2 s ... up to 8 s."""
    return backoff_seconds(attempt, first=_INITIAL_BACKOFF, longest=_MAX_BACKOFF)


def _retry_delay(headers: Mapping[str, str], attempt: int, now: datetime | None = None) -> float:
    """The wait a Retry-After header asks for (capped), else exponential backoff."""
    asked = retry_after_seconds(headers, now)
    if asked is None:
        return _backoff(attempt)
    return min(asked, _MAX_RETRY_WAIT)


def _provider_message(error: Exception) -> str:
    """The provider's own words: ``error.message`` of the JSON body, else the body, else str()."""
    body = getattr(error, "body", None)
    if isinstance(body, Mapping):
        message = body.get("message")
        if isinstance(message, str) and message:
            return message
    if isinstance(body, str) and body.strip():
        return body.strip()[:500]
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
        tool_choice = _tool_choice(config)
        if tool_choice is not None:
            params["tool_choice"] = tool_choice
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
    """One assistant message: its text, and its function calls as ``tool_calls``.

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
    message: dict[str, Any] = {"role": "assistant"}
    if text:
        message["content"] = text
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


def _tool_choice(config: types.GenerateContentConfig) -> str | dict[str, Any] | None:
    calling = config.tool_config.function_calling_config if config.tool_config else None
    if calling is None or calling.mode is None:
        return None
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

    def add(self, chunk: ChatCompletionChunk) -> str:
        """Take one chunk; return its text delta ('' when it has none)."""
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


def _final_response(
    *,
    text: str,
    calls: list[_ToolCall],
    finish_reason: str | None,
    usage: types.GenerateContentResponseUsageMetadata | None,
    model_version: str | None,
    turn_complete: bool | None = None,
) -> LlmResponse:
    """The one non-partial response of a call: text and function calls, or an error."""
    text_parts = [types.Part(text=text)] if text else []
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
    if not parts:
        return LlmResponse(
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
