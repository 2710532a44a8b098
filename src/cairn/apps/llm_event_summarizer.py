"""Summaries of old history (compaction): the interface and a model-backed summarizer."""

from __future__ import annotations

import abc
from collections.abc import Sequence

from google.genai import types

from cairn.agents.contents import retold
from cairn.events.event import Event
from cairn.events.event_actions import EventActions, EventCompaction
from cairn.models.base_llm import BaseLlm
from cairn.models.llm_request import LlmRequest

DEFAULT_PROMPT = (
    "Summarise the conversation below so that an assistant can carry on from the summary "
    "alone. Keep the user's facts, preferences, decisions, open questions and every result a "
    "tool returned that may matter later; drop small talk. Write plain prose.\n\n"
    "{conversation}"
)


class BaseEventsSummarizer(abc.ABC):
    """Turns a run of events into one compaction event (or None to skip this time)."""

    @abc.abstractmethod
    async def maybe_summarize_events(self, *, events: Sequence[Event]) -> Event | None:
        """A ``user``-authored event whose ``actions.compaction`` covers ``events``."""


_PLACEHOLDERS = ("{conversation}", "{conversation_history}")  # cairn's, ADK's


class LlmEventSummarizer(BaseEventsSummarizer):
    """Asks ``llm`` for a summary of the events, using ``prompt_template``
    (``{conversation}``, or ADK's ``{conversation_history}``, is replaced by the
    events as text). The summary event carries the model call's ``usage_metadata``."""

    def __init__(self, llm: BaseLlm, prompt_template: str | None = None) -> None:
        self.llm = llm
        self.prompt_template = prompt_template or DEFAULT_PROMPT
        found = [p for p in _PLACEHOLDERS if p in self.prompt_template]
        if not found:
            raise ValueError(
                "prompt_template must contain {conversation} (or {conversation_history}), "
                "where the events are inserted"
            )
        self._placeholder = found[0]

    async def maybe_summarize_events(self, *, events: Sequence[Event]) -> Event | None:
        if not events:
            return None
        conversation = "\n".join(line for event in events for line in as_lines(event))
        prompt = self.prompt_template.replace(self._placeholder, conversation)
        request = LlmRequest(
            model=self.llm.model,
            contents=[types.Content(role="user", parts=[types.Part(text=prompt)])],
        )
        text = ""
        usage: types.GenerateContentResponseUsageMetadata | None = None
        async for response in self.llm.generate_content_async(request, stream=False):
            if response.partial is True or response.content is None:
                continue
            text = "".join(p.text or "" for p in response.content.parts or [] if not p.thought)
            usage = response.usage_metadata or usage
        if not text:
            return None
        return compaction_event(events, text, usage_metadata=usage)


def compaction_event(
    events: Sequence[Event],
    summary: str,
    *,
    usage_metadata: types.GenerateContentResponseUsageMetadata | None = None,
) -> Event:
    """The event recording that ``summary`` stands for ``events`` in prompts."""
    return Event(
        author="user",
        invocation_id=events[-1].invocation_id,
        usage_metadata=usage_metadata,
        actions=EventActions(
            compaction=EventCompaction(
                start_timestamp=events[0].timestamp,
                end_timestamp=events[-1].timestamp,
                compacted_content=types.Content(role="model", parts=[types.Part(text=summary)]),
            )
        ),
    )


def as_lines(event: Event) -> list[str]:
    """An event as conversation lines (a summary event as its summary)."""
    compaction = event.actions.compaction
    if compaction is not None:
        parts = compaction.compacted_content.parts if compaction.compacted_content else None
        return [f"(summary of earlier conversation) {''.join(p.text or '' for p in parts or [])}"]
    return retold(event)
