"""LlmEventSummarizer: ADK's prompt placeholder, the model call's usage, responses it skips."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest
from google.genai import types

from cairn import LlmResponse
from cairn.apps import LlmEventSummarizer
from cairn.events import Event
from cairn.models.base_llm import BaseLlm
from cairn.models.llm_request import LlmRequest


class _Summaries(BaseLlm):
    """Answers with a fixed summary and token counts, and keeps the prompt it saw."""

    model: str = "summaries"
    prompts: list[str] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        assert stream is False
        self.prompts.append(llm_request.contents[0].parts[0].text or "")
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text="Ada likes tea.")]),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=7, candidates_token_count=3, total_token_count=10
            ),
        )


def _event(at: float, text: str, author: str) -> Event:
    return Event(timestamp=at, author=author, content=types.Content(parts=[types.Part(text=text)]))


async def test_an_adk_template_and_the_usage_of_the_summary_call() -> None:
    llm = _Summaries(prompts=[])
    summarizer = LlmEventSummarizer(llm, prompt_template="Sum up:\n{conversation_history}")
    event = await summarizer.maybe_summarize_events(
        events=[_event(1.0, "I like tea", "user"), _event(2.0, "Noted", "model")]
    )
    assert event is not None and event.author == "user"
    assert llm.prompts[0].startswith("Sum up:\n") and "I like tea" in llm.prompts[0]
    assert "{conversation_history}" not in llm.prompts[0]
    compaction = event.actions.compaction
    assert compaction is not None
    assert (compaction.start_timestamp, compaction.end_timestamp) == (1.0, 2.0)
    assert event.usage_metadata is not None and event.usage_metadata.total_token_count == 10


def test_a_template_without_a_placeholder_is_refused() -> None:
    with pytest.raises(ValueError, match="conversation"):
        LlmEventSummarizer(_Summaries(prompts=[]), prompt_template="no place for events")
