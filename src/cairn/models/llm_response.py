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
            if candidate.content and candidate.content.parts:
                return LlmResponse(
                    content=candidate.content,
                    grounding_metadata=candidate.grounding_metadata,
                    usage_metadata=usage,
                    finish_reason=candidate.finish_reason,
                    citation_metadata=candidate.citation_metadata,
                    avg_logprobs=candidate.avg_logprobs,
                    logprobs_result=candidate.logprobs_result,
                    model_version=response.model_version,
                )
            return LlmResponse(
                error_code=str(candidate.finish_reason or "UNKNOWN_ERROR"),
                error_message=candidate.finish_message or "the model returned no content",
                finish_reason=candidate.finish_reason,
                usage_metadata=usage,
                model_version=response.model_version,
            )
        feedback = response.prompt_feedback
        return LlmResponse(
            error_code=str(feedback.block_reason)
            if feedback and feedback.block_reason
            else "UNKNOWN_ERROR",
            error_message=(feedback.block_reason_message if feedback else None)
            or "the model returned no candidates",
            usage_metadata=usage,
            model_version=response.model_version,
        )
