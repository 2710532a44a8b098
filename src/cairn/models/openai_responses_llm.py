"""OpenAI's Responses API (``POST /v1/responses``) as a cairn model, and Azure OpenAI's.

``OpenAIResponsesLlm`` and ``AzureOpenAIResponsesLlm`` have the constructor of ADK's
(``google.adk.integrations.openai``); the client, retries and errors are those of the chat
completions adapter (:mod:`cairn.models.openai_llm`), and so is the conversion of tool
schemas, function-calling modes and structured output, reshaped for this API.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import openai
from google.genai import types
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseErrorEvent,
    ResponseFailedEvent,
    ResponseFunctionToolCall,
    ResponseIncompleteEvent,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseReasoningTextDeltaEvent,
    ResponseRefusalDeltaEvent,
    ResponseStreamEvent,
    ResponseTextDeltaEvent,
    ResponseUsage,
)
from pydantic import Field

from cairn.errors import CairnError
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.models.openai_config import drop_unsupported_sampling, reasoning_effort
from cairn.models.openai_llm import (
    _EmptyStreamError,
    _final_response,
    _OpenAIClientLlm,
    _response_format,
    _StreamFailure,
    _tool,
    _tool_choice,
    _ToolCall,
)
from cairn.models.stream_assembly import assembled

REFUSAL_PREFIX = "OpenAI refusal: "
"""What a refusal's text starts with in the response's text part (as in ADK)."""

_CALL_ID = re.compile(r"[A-Za-z0-9_-]+")
"""The call ids the Responses API takes."""


class OpenAIResponsesLlm(_OpenAIClientLlm):
    """A model served by OpenAI's Responses API, or a server speaking it.

    ``OpenAIResponsesLlm(model="gpt-5")`` reads ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL``
    from the environment; ``api_key=`` may be a function returning the key, ``base_url=``
    reaches another server (no key needed then), ``client=`` takes an
    ``openai.AsyncOpenAI`` you configured. Each call sends the whole conversation (cairn's
    log is the history): tool calls with their call ids, tool results, the system
    instruction as ``instructions``; reasoning summaries come back as thought parts, and
    the response's id as ``interaction_id``. ``store``, ``include``, ``reasoning``,
    ``parallel_tool_calls``, ``truncation`` and ``service_tier`` are sent when set;
    ``extra_request_args`` last, over everything else (its ``extra_body`` merged).

    A reasoning effort is set per request with
    :class:`~cairn.models.openai_config.OpenAIGenerateContentConfig` (``effort=``); it
    replaces the ``effort`` of ``reasoning`` and keeps the rest (a ``"concise"`` summary
    when ``reasoning`` is unset). Failures are retried and raised as for
    :class:`~cairn.models.openai_llm.OpenAILlm`: typed
    :class:`~cairn.models.errors.ModelCallError`, never a key in the message.
    """

    model: str = "gpt-5"
    store: bool | None = None
    include: list[str] | None = None
    reasoning: dict[str, Any] | None = None
    """The ``reasoning`` object of every request, e.g. ``{"effort": "medium", "summary":
    "detailed"}``."""
    parallel_tool_calls: bool | None = None
    truncation: str | None = None
    service_tier: str | None = None
    include_response_metadata: bool = True
    """Keep the response's id, status, output items and usage in the event's
    ``custom_metadata["openai_response"]``."""
    extra_request_args: dict[str, Any] = Field(default_factory=dict)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        body = self._body(llm_request)
        keep_metadata = self.include_response_metadata

        async def attempt(client: openai.AsyncOpenAI) -> AsyncIterator[LlmResponse]:
            if not stream:
                response = await client.responses.create(**body)
                yield _from_response(response, keep_metadata)
                return
            events = await client.responses.create(stream=True, **body)
            async for response in assembled(events, _StreamAssembler(keep_metadata)):
                yield response

        async for response in self._retried(attempt):
            yield response

    def _body(self, llm_request: LlmRequest) -> dict[str, Any]:
        """The request body, without ``stream``."""
        config = llm_request.config
        model = self._wire_model(llm_request)
        body: dict[str, Any] = {"model": model, "input": input_items(llm_request.contents)}
        if llm_request.system_instruction_text:
            body["instructions"] = llm_request.system_instruction_text
        if llm_request.previous_interaction_id:
            body["previous_response_id"] = llm_request.previous_interaction_id
        settings = {
            "temperature": config.temperature,
            "top_p": config.top_p,
            "max_output_tokens": config.max_output_tokens,
            "text": _text_format(config),
        }
        body.update({key: value for key, value in settings.items() if value is not None})
        drop_unsupported_sampling(body, model)
        # The Responses API has no stop sequences of its own; servers that take them read
        # them from the body (as ADK sends them).
        extra_body: dict[str, Any] = {}
        if config.stop_sequences:
            extra_body["stop"] = config.stop_sequences
        declarations = llm_request.function_declarations
        if declarations:
            body["tools"] = [_response_tool(declaration) for declaration in declarations]
        reasoning = self._reasoning(config, model)
        options = {
            "store": self.store,
            "include": self.include,
            "reasoning": reasoning,
            "parallel_tool_calls": self.parallel_tool_calls,
            "truncation": self.truncation,
            "service_tier": self.service_tier,
        }
        body.update({key: value for key, value in options.items() if value is not None})
        extra = dict(self.extra_request_args)
        extra_body.update(extra.pop("extra_body", None) or {})
        body.update(extra)
        if body.get("tools") and "tool_choice" not in body:
            body["tool_choice"] = _response_tool_choice(config)
        if extra_body:
            body["extra_body"] = extra_body
        return body

    def _reasoning(self, config: types.GenerateContentConfig, model: str) -> dict[str, Any] | None:
        effort = reasoning_effort(config, model, "responses", validate=self._targets_openai())
        if effort is None:
            return self.reasoning
        if self.reasoning:
            return {**self.reasoning, "effort": effort}
        return {"effort": effort, "summary": "concise"}


class AzureOpenAIConfigurationError(CairnError, ValueError):
    """An ``AzureOpenAIResponsesLlm`` has no endpoint to call."""


class AzureOpenAIResponsesLlm(OpenAIResponsesLlm):
    """The Responses API of an Azure OpenAI resource, at its OpenAI-compatible
    ``<azure_endpoint>/openai/v1/`` (as ADK calls it); ``model`` is the deployment's name.

    The key is ``api_key=``, else ``AZURE_OPENAI_API_KEY``, else ``OPENAI_API_KEY``. The
    endpoint is ``azure_endpoint=``, else ``base_url=`` as given, else the
    ``AZURE_OPENAI_ENDPOINT`` environment variable; with none of them the model refuses to
    run rather than send an Azure key to api.openai.com.
    """

    azure_endpoint: str | None = None

    _provider: ClassVar[str] = "azure_openai"
    _api_key_env: ClassVar[str] = "AZURE_OPENAI_API_KEY"

    def _endpoint(self) -> tuple[str | None, str | Callable[[], Awaitable[str]]]:
        endpoint = self.azure_endpoint or os.environ.get("AZURE_OPENAI_ENDPOINT")
        if self.azure_endpoint is None and self.base_url is not None:
            base_url = self.base_url
        elif endpoint:
            base_url = endpoint.rstrip("/") + "/openai/v1/"
        else:
            raise AzureOpenAIConfigurationError(
                f"AzureOpenAIResponsesLlm(model={self.model!r}) has no endpoint: pass "
                "azure_endpoint='https://<resource>.openai.azure.com' (or base_url=), or set "
                "the AZURE_OPENAI_ENDPOINT environment variable"
            )
        if self.api_key is None and not os.environ.get(self._api_key_env):
            fallback = os.environ.get("OPENAI_API_KEY")
            if fallback:
                return base_url, fallback
        return base_url, self._key(base_url, local_hint=False)

    def _targets_openai(self) -> bool:
        return False  # a deployment's name says nothing about the efforts it takes


# --- request -------------------------------------------------------------------------------


def input_items(contents: list[types.Content]) -> list[dict[str, Any]]:
    """The Responses API's ``input``: messages, function calls and their outputs, in order.

    Thought parts are left out (a reasoning item can only be sent back by the id the server
    gave it, which a thought part does not keep). Call ids the API would refuse are
    replaced, consistently; a call without an id gets one, and so does its response.
    """
    ids = _CallIds()
    items: list[dict[str, Any]] = []
    for content in contents:
        if content.role == "model":
            _add_assistant_items(content.parts or [], items, ids)
        else:
            _add_user_items(content.parts or [], items, ids)
    return items


@dataclass
class _CallIds:
    """Call ids as the API takes them: ``[A-Za-z0-9_-]+``, the same for a call and its result."""

    replaced: dict[str, str] = field(default_factory=dict)
    waiting: dict[str, list[str]] = field(default_factory=dict)
    """Ids given to calls that had none, by tool name, for their responses."""
    count: int = 0

    def _new(self) -> str:
        self.count += 1
        return f"call_cairn_{self.count}"

    def of_call(self, call: types.FunctionCall) -> str:
        if not call.id:
            new = self._new()
            self.waiting.setdefault(call.name or "", []).append(new)
            return new
        return self._valid(call.id)

    def of_response(self, response: types.FunctionResponse) -> str:
        if not response.id:
            waiting = self.waiting.get(response.name or "")
            return waiting.pop(0) if waiting else self._new()
        return self._valid(response.id)

    def _valid(self, call_id: str) -> str:
        if _CALL_ID.fullmatch(call_id):
            return call_id
        if call_id not in self.replaced:
            self.replaced[call_id] = self._new()
        return self.replaced[call_id]


def _function_call_item(call: types.FunctionCall, ids: _CallIds) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": ids.of_call(call),
        "name": call.name or "",
        "arguments": json.dumps(call.args or {}, ensure_ascii=False),
    }


def _add_assistant_items(
    parts: list[types.Part], items: list[dict[str, Any]], ids: _CallIds
) -> None:
    """The model's text (one message per run of text parts) and its function calls."""
    text: list[str] = []

    def flush() -> None:
        if text:
            items.append({"type": "message", "role": "assistant", "content": "".join(text)})
            text.clear()

    for part in parts:
        if part.function_call is not None:
            flush()
            items.append(_function_call_item(part.function_call, ids))
        elif part.thought:
            continue
        elif part.text:
            text.append(part.text)
        elif (code := _code_text(part)) is not None:
            text.append(code)
    flush()


def _add_user_items(parts: list[types.Part], items: list[dict[str, Any]], ids: _CallIds) -> None:
    """Tool results as ``function_call_output`` items, the rest as one user message."""
    content: list[dict[str, Any]] = []

    def flush() -> None:
        if content:
            items.append({"type": "message", "role": "user", "content": list(content)})
            content.clear()

    for part in parts:
        if part.function_response is not None:
            flush()
            response = part.function_response
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": ids.of_response(response),
                    "output": tool_output_text(response.response),
                }
            )
        elif part.function_call is not None:  # a call replayed under the user's role
            flush()
            items.append(_function_call_item(part.function_call, ids))
        elif part.thought:
            continue
        elif part.text:
            content.append({"type": "input_text", "text": part.text})
        elif part.inline_data is not None:
            content.append(_inline_input(part.inline_data))
        elif part.file_data is not None and part.file_data.file_uri:
            content.append(_file_input(part.file_data))
        elif (code := _code_text(part)) is not None:
            content.append({"type": "input_text", "text": code})
    flush()


def _inline_input(blob: types.Blob) -> dict[str, Any]:
    mime_type = blob.mime_type or "application/octet-stream"
    data = base64.b64encode(blob.data or b"").decode("ascii")
    url = f"data:{mime_type};base64,{data}"
    if mime_type.startswith("image/"):
        return {"type": "input_image", "detail": "auto", "image_url": url}
    return {"type": "input_file", "filename": blob.display_name or "inline_data", "file_data": url}


def _file_input(file: types.FileData) -> dict[str, Any]:
    uri = file.file_uri or ""
    if (file.mime_type or "").startswith("image/"):
        return {"type": "input_image", "detail": "auto", "image_url": uri}
    if uri.startswith("file-"):  # a file uploaded to OpenAI, by its id
        return {"type": "input_file", "file_id": uri}
    return {"type": "input_file", "file_url": uri}


def _code_text(part: types.Part) -> str | None:
    """Code the agent ran, and its result, as text (the API has no part for them)."""
    if part.executable_code is not None:
        return f"Code:```python\n{part.executable_code.code or ''}\n```"
    if part.code_execution_result is not None:
        return f"Execution Result:```code_output\n{part.code_execution_result.output or ''}\n```"
    return None


def tool_output_text(result: Any) -> str:
    """A tool's result as the string the API takes: a string as it is, the text of an MCP
    style ``{"content": [...]}``, the value of ``{"result": ...}`` (what a function tool's
    plain return value is wrapped in), else JSON."""
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    if isinstance(result, Mapping):
        blocks = result.get("content")
        if isinstance(blocks, list) and blocks:
            return "\n".join(
                str(block["text"])
                if isinstance(block, Mapping) and block.get("type") == "text" and "text" in block
                else json.dumps(block, ensure_ascii=False, default=str)
                for block in blocks
            )
        if isinstance(blocks, str) and blocks:
            return blocks
        if result.get("result") is not None and set(result) <= {"result", "content"}:
            value = result["result"]
            return value if isinstance(value, str) else json.dumps(value, default=str)
    return json.dumps(result, ensure_ascii=False, default=str)


def _response_tool(declaration: types.FunctionDeclaration) -> dict[str, Any]:
    """A function tool in this API's flat shape (the chat adapter's conversion, unnested)."""
    function = dict(_tool(declaration)["function"])
    return {"type": "function", **function, "strict": False}


def _response_tool_choice(config: types.GenerateContentConfig) -> str | dict[str, Any]:
    choice = _tool_choice(config)
    if isinstance(choice, dict):
        return {"type": "function", "name": choice["function"]["name"]}
    return choice


def _text_format(config: types.GenerateContentConfig) -> dict[str, Any] | None:
    """Structured output as ``text.format``: a strict JSON schema, or any JSON object."""
    chat_format = _response_format(config)
    if chat_format is None:
        return None
    if chat_format["type"] != "json_schema":
        return {"format": {"type": "json_object"}}
    wanted = chat_format["json_schema"]
    return {
        "format": {
            "type": "json_schema",
            "name": wanted["name"],
            "schema": strict_schema(wanted["schema"]),
            "strict": True,
        }
    }


def strict_schema(schema: Any) -> Any:
    """``schema`` as strict structured output takes it: each object with properties lists
    them all as required and allows no others; a ``$ref`` stands alone."""
    if isinstance(schema, list):
        return [strict_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        return {"$ref": schema["$ref"]}
    strict = {key: strict_schema(value) for key, value in schema.items()}
    for key in ("properties", "$defs", "definitions"):
        if isinstance(schema.get(key), dict):
            strict[key] = {name: strict_schema(sub) for name, sub in schema[key].items()}
    if strict.get("type") == "object" and isinstance(strict.get("properties"), dict):
        strict["additionalProperties"] = False
        strict["required"] = sorted(strict["properties"])
    return strict


# --- response ------------------------------------------------------------------------------


def _finish_reason(response: Response) -> str | None:
    """The status as the chat adapter's finish reasons, whose mapping is shared."""
    if response.status == "completed":
        return "stop"
    if response.status == "incomplete":
        reason = response.incomplete_details.reason if response.incomplete_details else None
        if reason == "max_output_tokens":
            return "length"
        return reason or "incomplete"
    return None


def _usage(usage: ResponseUsage | None) -> types.GenerateContentResponseUsageMetadata | None:
    if usage is None:
        return None
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=usage.input_tokens,
        candidates_token_count=usage.output_tokens,
        total_token_count=usage.total_tokens,
        cached_content_token_count=usage.input_tokens_details.cached_tokens
        if usage.input_tokens_details
        else None,
        thoughts_token_count=usage.output_tokens_details.reasoning_tokens
        if usage.output_tokens_details
        else None,
    )


def _thought_parts(item: ResponseReasoningItem) -> list[types.Part]:
    """A reasoning item's summary and text as thought parts; its encrypted content, when
    the request asked for it, as their ``thought_signature``."""
    signature = item.encrypted_content.encode() if item.encrypted_content else None
    texts = [summary.text for summary in item.summary if summary.text]
    texts += [content.text for content in item.content or [] if content.text]
    parts = [types.Part(text=text, thought=True, thought_signature=signature) for text in texts]
    if not parts and signature is not None:
        parts.append(types.Part(thought=True, thought_signature=signature))
    return parts


def _from_response(response: Response, keep_metadata: bool) -> LlmResponse:
    """A finished response as the call's one non-partial LlmResponse."""
    if response.status == "failed":
        error = response.error
        raise _StreamFailure(
            error.message if error else "the response failed", error.code if error else None
        )
    thoughts: list[types.Part] = []
    text: list[str] = []
    calls: list[_ToolCall] = []
    unmapped: list[dict[str, Any]] = []
    for item in response.output:
        if isinstance(item, ResponseOutputMessage):
            for block in item.content:
                if isinstance(block, ResponseOutputText):
                    text.append(block.text)
                elif isinstance(block, ResponseOutputRefusal):
                    text.append(REFUSAL_PREFIX + block.refusal)
        elif isinstance(item, ResponseFunctionToolCall):
            call_id = item.call_id or item.id or ""
            calls.append(_ToolCall(id=call_id, name=item.name, arguments=item.arguments))
        elif isinstance(item, ResponseReasoningItem):
            thoughts.extend(_thought_parts(item))
        else:
            unmapped.append(item.model_dump(mode="json", exclude_none=True))
    result = _final_response(
        text="".join(text),
        calls=calls,
        finish_reason=_finish_reason(response),
        usage=_usage(response.usage),
        model_version=response.model or None,
        thoughts=thoughts,
    )
    update: dict[str, Any] = {"interaction_id": response.id}
    if keep_metadata:
        update["custom_metadata"] = {"openai_response": _metadata(response, unmapped)}
    return result.model_copy(update=update)


def _metadata(response: Response, unmapped: list[dict[str, Any]]) -> dict[str, Any]:
    """What ADK keeps of a response in ``custom_metadata["openai_response"]``."""
    kept: dict[str, Any] = {
        "id": response.id,
        "status": response.status,
        "output": [item.model_dump(mode="json", exclude_none=True) for item in response.output],
    }
    if response.usage is not None:
        kept["usage"] = response.usage.model_dump(mode="json", exclude_none=True)
    reasoning = [
        item.model_dump(mode="json", include={"id", "encrypted_content"}, exclude_none=True)
        for item in response.output
        if isinstance(item, ResponseReasoningItem)
    ]
    if reasoning:
        kept["reasoning"] = reasoning
    if unmapped:
        kept["unmapped_output"] = unmapped
    return kept


@dataclass
class _StreamAssembler:
    """Reads a response's event stream: text and reasoning deltas become partial responses;
    the finished response (``response.completed`` / ``response.incomplete``) the final one."""

    keep_metadata: bool = False
    """Whether the final response keeps the server's response metadata."""
    response_id: str | None = None
    model: str | None = None
    finished: Response | None = None
    deltas: int = 0

    def add(self, event: ResponseStreamEvent) -> LlmResponse | None:
        """Take one event; return the partial response it makes, if any. A failure the
        server reports in the stream is raised as such (and retried if nothing was shown)."""
        if isinstance(event, ResponseCreatedEvent):
            self.response_id = event.response.id
            self.model = event.response.model or None
        elif isinstance(event, ResponseTextDeltaEvent | ResponseRefusalDeltaEvent):
            return self._partial(types.Part(text=event.delta)) if event.delta else None
        elif isinstance(
            event, ResponseReasoningSummaryTextDeltaEvent | ResponseReasoningTextDeltaEvent
        ):
            thought = types.Part(text=event.delta, thought=True)
            return self._partial(thought) if event.delta else None
        elif isinstance(event, ResponseCompletedEvent | ResponseIncompleteEvent):
            self.finished = event.response
        elif isinstance(event, ResponseFailedEvent):
            error = event.response.error
            raise _StreamFailure(
                error.message if error else "the response failed", error.code if error else None
            )
        elif isinstance(event, ResponseErrorEvent):
            raise _StreamFailure(event.message, event.code)
        return None

    def _partial(self, part: types.Part) -> LlmResponse:
        self.deltas += 1
        return LlmResponse(
            partial=True,
            content=types.Content(role="model", parts=[part]),
            model_version=self.model,
            interaction_id=self.response_id,
        )

    def final(self) -> LlmResponse:
        if self.finished is None:
            raise _EmptyStreamError(
                "the server answered 200, then its stream ended before the response was "
                f"complete (no response.completed event, after {self.deltas} deltas)"
                if self.deltas
                else ""
            )
        final = _from_response(self.finished, self.keep_metadata)
        return final.model_copy(update={"turn_complete": True})
