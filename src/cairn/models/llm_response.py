"""One response (or streamed chunk) from a model."""

from __future__ import annotations

from google.genai import types

from cairn.events.llm_response_fields import LlmResponseFields


class LlmResponse(LlmResponseFields):
    """What a model adapter yields: content plus usage, finish reason or an error.

    With ``partial=True`` it is a streaming chunk; the adapter yields one
    aggregated non-partial response after the chunks.
    """

    @staticmethod
    def create(response: types.GenerateContentResponse) -> LlmResponse:
        """From a google-genai response: the first candidate, or an error naming why not."""
        usage = response.usage_metadata
        if response.candidates:
            candidate = response.candidates[0]
            finished_normally = candidate.finish_reason in (None, types.FinishReason.STOP)
            if (candidate.content and candidate.content.parts) or finished_normally:
                # An empty STOP (e.g. nothing to add after a function response) is a reply too.
                return LlmResponse(
                    content=candidate.content,
                    grounding_metadata=candidate.grounding_metadata,
                    url_context_metadata=candidate.url_context_metadata,
                    usage_metadata=usage,
                    finish_reason=candidate.finish_reason,
                    citation_metadata=candidate.citation_metadata,
                    avg_logprobs=candidate.avg_logprobs,
                    logprobs_result=candidate.logprobs_result,
                    model_version=response.model_version,
                )
            reason = candidate.finish_reason
            return LlmResponse(
                error_code=reason.value if reason is not None else "UNKNOWN_ERROR",
                error_message=candidate.finish_message or "the model returned no content",
                finish_reason=candidate.finish_reason,
                usage_metadata=usage,
                model_version=response.model_version,
            )
        feedback = response.prompt_feedback
        if feedback is None or feedback.block_reason is None:
            return LlmResponse(usage_metadata=usage, model_version=response.model_version)
        return LlmResponse(
            error_code=feedback.block_reason.value,
            error_message=feedback.block_reason_message or "the prompt was blocked",
            usage_metadata=usage,
            model_version=response.model_version,
        )
