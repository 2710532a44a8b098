"""OpenTelemetry spans for invocations, agent runs, model calls and tool calls.

Only ``opentelemetry-api`` is used: every span is a no-op until the application
configures an SDK (a ``TracerProvider`` with an exporter). Names and attributes
follow the OpenTelemetry GenAI semantic conventions; every span also carries
``cairn.app_name``, ``cairn.user_id``, ``cairn.session_id`` and ``cairn.invocation_id``.

The span helpers never make their span current across a ``yield``: a span that
lives in an async generator is made current only while its work runs, by
iterating that work through ``in_span(span, events)``. So spans nest as the
calls do (tool and model spans under their agent's span, under the invocation's)
however the caller interleaves generators, and a generator closed early still
ends its span.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping
from types import TracebackType
from typing import Protocol, TypeVar

from google.genai import types
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from cairn.telemetry import content, metrics
from cairn.version import __version__

T = TypeVar("T")

Measure = Callable[[float, str | None], None]
"""Told a span's duration in seconds and its error type (None if it did not raise)."""


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


class Invocation(Protocol):
    """What a span needs to name its invocation (an ``InvocationContext`` has it)."""

    @property
    def app_name(self) -> str: ...
    @property
    def user_id(self) -> str: ...
    @property
    def session(self) -> _HasId: ...
    @property
    def invocation_id(self) -> str: ...


class ModelResponse(Protocol):
    """The parts of an ``LlmResponse`` a model span records."""

    @property
    def usage_metadata(self) -> types.GenerateContentResponseUsageMetadata | None: ...
    @property
    def finish_reason(self) -> types.FinishReason | None: ...
    @property
    def model_version(self) -> str | None: ...
    @property
    def error_code(self) -> str | None: ...
    @property
    def error_message(self) -> str | None: ...
    @property
    def content(self) -> types.Content | None: ...


def _ids(app_name: str, user_id: str, session_id: str, invocation_id: str) -> dict[str, str]:
    return {
        "cairn.app_name": app_name,
        "cairn.user_id": user_id,
        "cairn.session_id": session_id,
        "cairn.invocation_id": invocation_id,
        "gen_ai.conversation.id": session_id,
    }


def _ids_of(ctx: Invocation) -> dict[str, str]:
    return _ids(ctx.app_name, ctx.user_id, ctx.session.id, ctx.invocation_id)


def _set_error(span: Span, error_type: str, description: str) -> None:
    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, description))


@functools.cache
def _tracer() -> trace.Tracer:
    # Before a provider is set this is the API's proxy, which forwards to it once set.
    return trace.get_tracer("cairn", __version__)


def _tracing() -> bool:
    """Whether the application has set a tracer provider (until then every span is a no-op,
    so none is started nor made current: an untraced invocation pays nothing for tracing)."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def _current(span: Span) -> contextlib.AbstractContextManager[object]:
    """``span`` made current (nothing to do for the no-op span of an untraced process)."""
    if span is trace.INVALID_SPAN:
        return contextlib.nullcontext()
    return trace.use_span(span, record_exception=False, set_status_on_exception=False)


class _SpanScope(contextlib.AbstractContextManager[Span]):
    """A span, child of the current one, that records an escaping exception and always ends;
    ``measure`` is told its duration (for the metrics).

    A provider configured later is used (the API's proxy tracer forwards to it). A class
    rather than a generator: six of these open per invocation, traced or not.
    """

    __slots__ = ("_attributes", "_kind", "_measure", "_name", "_span", "_started")

    def __init__(
        self,
        name: str,
        attributes: Mapping[str, AttributeValue],
        kind: SpanKind = SpanKind.INTERNAL,
        measure: Measure | None = None,
    ) -> None:
        self._name = name
        self._attributes = attributes
        self._kind = kind
        self._measure = measure
        self._span: Span = trace.INVALID_SPAN
        self._started = 0.0

    def __enter__(self) -> Span:
        if _tracing():
            self._span = _tracer().start_span(
                self._name, kind=self._kind, attributes=self._attributes
            )
        self._started = time.perf_counter()
        return self._span

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        span = self._span
        error_type: str | None = None
        try:
            if isinstance(error, Exception):  # GeneratorExit and cancellation are not errors
                error_type = type(error).__qualname__
                span.record_exception(error)
                _set_error(span, error_type, f"{type(error).__name__}: {error}")
        finally:
            span.end()
            if self._measure is not None:
                self._measure(time.perf_counter() - self._started, error_type)


async def _steps_in(span: Span, events: AsyncGenerator[T, None]) -> AsyncGenerator[T, None]:
    try:
        while True:
            with _current(span):
                try:
                    item = await anext(events)
                except StopAsyncIteration:
                    return
            yield item
    finally:
        with _current(span):
            await events.aclose()


def in_span(
    span: Span, events: AsyncGenerator[T, None]
) -> contextlib.aclosing[AsyncGenerator[T, None]]:
    """Iterate ``events`` with ``span`` current while each step runs, not while a caller
    holds an item; ``events`` is closed on exit::

        async with telemetry.in_span(span, events) as steps:
            async for event in steps:
                yield event
    """
    if span is trace.INVALID_SPAN:
        return contextlib.aclosing(events)  # untraced: nothing to make current around a step
    return contextlib.aclosing(_steps_in(span, events))


def invocation_span(
    *, app_name: str, user_id: str, session_id: str, invocation_id: str
) -> contextlib.AbstractContextManager[Span]:
    """``invocation``: one ``Runner.run_async``. Drive its work with ``in_span``."""

    def measure(seconds: float, error_type: str | None) -> None:
        metrics.record_invocation(app_name, seconds, error_type)

    return _SpanScope(
        "invocation", _ids(app_name, user_id, session_id, invocation_id), measure=measure
    )


def agent_span(ctx: Invocation, agent_name: str) -> contextlib.AbstractContextManager[Span]:
    """``invoke_agent <name>``: one agent run. Drive its work with ``in_span``."""
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent_name,
        **_ids_of(ctx),
    }
    return _SpanScope(f"invoke_agent {agent_name}", attributes)


def model_span(ctx: Invocation, model: str) -> contextlib.AbstractContextManager[Span]:
    """``chat <model>``: one model call. Drive the response stream with ``in_span``,
    then ``record_response`` the final response."""
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
        **_ids_of(ctx),
    }

    def measure(seconds: float, error_type: str | None) -> None:
        metrics.record_model_call(model, seconds, error_type)

    return _SpanScope(f"chat {model}".rstrip(), attributes, SpanKind.CLIENT, measure)


_REQUEST_SETTINGS = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "top_k": "gen_ai.request.top_k",
    "max_output_tokens": "gen_ai.request.max_tokens",
    "stop_sequences": "gen_ai.request.stop_sequences",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "seed": "gen_ai.request.seed",
    "candidate_count": "gen_ai.request.choice.count",
}


def _capturing(span: Span) -> bool:
    """Whether to put content on ``span``: capture is on and the span is recorded (without an
    SDK every span is a no-op, and serializing a whole conversation for it is wasted work)."""
    return span.is_recording() and content.capture_enabled()


def record_request(
    span: Span, config: types.GenerateContentConfig, contents: list[types.Content]
) -> None:
    """The request a model call sends: its generation settings always; its system
    instruction, messages, tool declarations and whole config when content capture is on."""
    for field, attribute in _REQUEST_SETTINGS.items():
        value = getattr(config, field)
        if value is not None:
            span.set_attribute(attribute, value)
    if not _capturing(span):
        return
    span.set_attribute(
        "gen_ai.system_instructions", content.attribute_json(content.system_instructions(config))
    )
    span.set_attribute("gen_ai.input.messages", content.messages_json(contents))
    tools = content.tool_definitions(config)
    if tools:
        span.set_attribute("gen_ai.tool.definitions", content.attribute_json(tools))
    span.set_attribute(
        "cairn.request.config", content.attribute_json(content.generation_config(config))
    )


def record_response(
    span: Span,
    response: ModelResponse,
    *,
    model: str = "",
    event_id: str | None = None,
) -> None:
    """Token usage, finish reason and response model of a model call's final response; its
    content when content capture is on;
    ``event_id``: the event the reply becomes, for ``GET /debug/trace/{event_id}``."""
    usage = response.usage_metadata
    input_tokens = usage.prompt_token_count if usage is not None else None
    output_tokens = usage.candidates_token_count if usage is not None else None
    if input_tokens is not None:
        span.set_attribute("gen_ai.usage.input_tokens", input_tokens)
    if output_tokens is not None:
        span.set_attribute("gen_ai.usage.output_tokens", output_tokens)
    metrics.record_tokens(model, response.model_version, input_tokens, output_tokens)
    finish_reason = response.finish_reason.name.lower() if response.finish_reason else None
    if finish_reason is not None:
        span.set_attribute("gen_ai.response.finish_reasons", [finish_reason])
    if response.model_version:
        span.set_attribute("gen_ai.response.model", response.model_version)
    if event_id:
        span.set_attribute("cairn.event_id", event_id)
    if _capturing(span):
        span.set_attribute(
            "gen_ai.output.messages",
            content.attribute_json(content.output_messages(response.content, finish_reason)),
        )
    if response.error_code:
        _set_error(span, response.error_code, response.error_message or response.error_code)


@contextlib.contextmanager
def tool_span(ctx: Invocation, tool_name: str, call_id: str | None) -> Iterator[Span]:
    """``execute_tool <name>``: one tool call, current while the ``with`` body runs (use it
    around awaits only, never around a ``yield``)."""
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool_name,
        **_ids_of(ctx),
    }
    if call_id:
        attributes["gen_ai.tool.call.id"] = call_id

    def measure(seconds: float, error_type: str | None) -> None:
        metrics.record_tool_call(tool_name, seconds, error_type)

    with (
        _SpanScope(f"execute_tool {tool_name}", attributes, measure=measure) as span,
        _current(span),
    ):
        yield span


def record_tool_arguments(span: Span, arguments: Mapping[str, object]) -> None:
    """A tool call's arguments, when content capture is on (before it runs: kept if it fails)."""
    if _capturing(span):
        span.set_attribute("gen_ai.tool.call.arguments", content.attribute_json(dict(arguments)))


def record_tool_result(span: Span, result: object) -> None:
    """A tool call's result, when content capture is on."""
    if _capturing(span):
        span.set_attribute("gen_ai.tool.call.result", content.attribute_json(result))
