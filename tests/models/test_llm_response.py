"""LlmResponse.create: a google-genai response as one cairn response."""

from __future__ import annotations

from google.genai import types

from cairn import LlmResponse


def response(**fields: object) -> types.GenerateContentResponse:
    return types.GenerateContentResponse.model_validate(fields)


def test_content_usage_and_finish_reason_are_kept() -> None:
    created = LlmResponse.create(
        response(
            candidates=[
                {"content": {"role": "model", "parts": [{"text": "hi"}]}, "finish_reason": "STOP"}
            ],
            usage_metadata={"prompt_token_count": 3, "candidates_token_count": 1},
        )
    )
    assert created.content.parts[0].text == "hi" and created.error_code is None
    assert created.usage_metadata.prompt_token_count == 3
    assert created.finish_reason == types.FinishReason.STOP


def test_an_empty_stop_is_an_empty_reply_not_an_error() -> None:
    created = LlmResponse.create(response(candidates=[{"finish_reason": "STOP"}]))
    assert created.error_code is None and created.content is None


def test_a_safety_stop_is_an_error_with_a_plain_code() -> None:
    created = LlmResponse.create(
        response(candidates=[{"finish_reason": "SAFETY", "finish_message": "blocked"}])
    )
    assert created.error_code == "SAFETY" and created.error_message == "blocked"


def test_a_blocked_prompt_names_the_reason() -> None:
    created = LlmResponse.create(response(prompt_feedback={"block_reason": "PROHIBITED_CONTENT"}))
    assert created.error_code == "PROHIBITED_CONTENT"
    assert LlmResponse.create(response()).error_code is None
