"""ReflectAndRetryModelPlugin: a failed model reply becomes a call the model is shown, and
the model tries again.

A reply whose ``error_code`` is set with a finish reason in ``on_model_errors`` (by default
``MALFORMED_FUNCTION_CALL``) is replaced by a call of the reserved tool
``adk_handle_model_error``, whose result tells the model what went wrong; the model then
answers again, up to ``max_retries`` failures in a row. The count is read from the log
(each replacement call carries its ``retry_count``), so a resumed invocation, in any
process, goes on counting where it stopped.
"""

from __future__ import annotations

import uuid

from google.genai import types

from cairn.agents.context import Context
from cairn.agents.llm_agent import LlmAgent
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.plugins.base_plugin import BasePlugin
from cairn.plugins.failure_counts import (
    REFLECT_AND_RETRY_RESPONSE_TYPE,
    InFlight,
    TrackingScope,
    model_failures,
    scope_key,
)
from cairn.tools.function_tool import FunctionTool

RESERVED_TOOL_CALL_ERROR_TYPE = "RESERVED_TOOL_CALL"
SKIP_THOUGHT_SIGNATURE = b"skip_thought_signature_validator"
"""What a made-up call carries as its thought signature, so Gemini accepts it in history."""


class ReflectAndRetryModelPlugin(BasePlugin):
    """Lets the model retry after a failed reply, up to ``max_retries`` times in a row."""

    def __init__(
        self,
        name: str = "reflect_retry_model_plugin",
        max_retries: int = 3,
        throw_exception_if_retry_exceeded: bool = True,
        tracking_scope: TrackingScope = TrackingScope.INVOCATION,
        on_model_errors: list[types.FinishReason] | None = None,
    ) -> None:
        super().__init__(name=name)
        if max_retries < 0:
            raise ValueError(
                f"max_retries must be a non-negative integer, got {max_retries} "
                "(0 means no retries)"
            )
        reasons = (
            [types.FinishReason.MALFORMED_FUNCTION_CALL]
            if on_model_errors is None
            else on_model_errors
        )
        for reason in reasons:
            if not isinstance(reason, types.FinishReason):
                raise ValueError(
                    f"on_model_errors takes google.genai.types.FinishReason values, got {reason!r}"
                )
        self.max_retries = max_retries
        self.throw_exception_if_retry_exceeded = throw_exception_if_retry_exceeded
        self.scope = tracking_scope
        self.on_model_errors = reasons
        self._in_flight = InFlight()

    def adk_handle_model_error(
        self,
        *,
        response_type: str,
        error_type: str | None,
        error_details: str | None,
        finish_reason: str | None,
        retry_count: int,
    ) -> dict[str, str]:
        """Reserved for the framework: tells the model its previous reply failed. Do not call it."""
        return {
            "reflection_guidance": (
                f"Your previous reply could not be used ({error_type}: {error_details}). "
                f"This is retry {retry_count} of {self.max_retries}. Look at what went wrong "
                "and answer again; do not repeat the same reply."
            )
        }

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        name = self.adk_handle_model_error.__name__
        llm_request.tools_dict[name] = FunctionTool(func=self.adk_handle_model_error)
        return None

    async def after_model_callback(
        self, *, callback_context: Context, llm_response: LlmResponse
    ) -> LlmResponse | None:
        parts = llm_response.content.parts if llm_response.content else None
        calls = [part.function_call for part in parts or [] if part.function_call]
        if any(self._is_retry_call(call) for call in calls):
            retry = self._retry(
                callback_context,
                error_type=RESERVED_TOOL_CALL_ERROR_TYPE,
                error_details=(
                    f"The model called the reserved tool {self.adk_handle_model_error.__name__} "
                    "itself; it is for the framework only. Do not call it."
                ),
                finish_reason=types.FinishReason.OTHER,
            )
            return retry or LlmResponse(
                error_code=RESERVED_TOOL_CALL_ERROR_TYPE,
                error_message="The model called a reserved tool and its retry limit is reached.",
            )
        if llm_response.error_code and llm_response.finish_reason in self.on_model_errors:
            retry = self._retry(
                callback_context,
                error_type=llm_response.error_code,
                error_details=llm_response.error_message,
                finish_reason=llm_response.finish_reason,
            )
            return retry or llm_response
        self._in_flight.forget(self._key(callback_context))
        return None

    def _is_retry_call(self, call: types.FunctionCall) -> bool:
        return call.name == self.adk_handle_model_error.__name__

    def _key(self, callback_context: Context) -> tuple[str, str]:
        return (
            scope_key(self.scope, callback_context.invocation_id),
            f"{callback_context.agent_name}:{_model_name(callback_context)}",
        )

    def _retry(
        self,
        callback_context: Context,
        *,
        error_type: str | None,
        error_details: str | None,
        finish_reason: types.FinishReason | None,
    ) -> LlmResponse | None:
        """The reply that makes the model try again, or None when the limit is reached (or
        the error raised, with ``throw_exception_if_retry_exceeded``)."""
        events = callback_context.session.events
        logged = model_failures(
            events,
            self.scope,
            callback_context.invocation_id,
            callback_context.agent_name,
            self._is_retry_call,
        )
        count = self._in_flight.next_count(self._key(callback_context), logged, len(events))
        if count > self.max_retries:
            if self.throw_exception_if_retry_exceeded:
                raise RuntimeError(
                    f"The model failed {self.max_retries} times in a row and its retry limit "
                    f"is reached (agent {callback_context.agent_name!r})."
                )
            return None
        call = types.FunctionCall(
            id=f"{self.adk_handle_model_error.__name__}_{uuid.uuid4()}",
            name=self.adk_handle_model_error.__name__,
            args={
                "response_type": REFLECT_AND_RETRY_RESPONSE_TYPE,
                "error_type": error_type,
                "error_details": error_details,
                "finish_reason": finish_reason.value if finish_reason else None,
                "retry_count": count,
            },
        )
        part = types.Part(function_call=call, thought_signature=SKIP_THOUGHT_SIGNATURE)
        return LlmResponse(content=types.Content(role="model", parts=[part]))


def _model_name(callback_context: Context) -> str:
    agent = callback_context.invocation_context.agent
    if isinstance(agent, LlmAgent):
        return agent.canonical_model.model
    return ""
