"""When to compact a session's history, and what the summary covers.

Each summary supersedes the ones before it: it covers the history from its
very start (the previous summary is part of what is summarised), so a prompt
is the newest summary plus the events after it. The log keeps every event.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.genai import types

from cairn.apps.app import EventsCompactionConfig
from cairn.apps.llm_event_summarizer import BaseEventsSummarizer
from cairn.events.event import Event
from cairn.events.event_actions import EventActions, EventCompaction
from cairn.events.interrupts import starts_invocation


def _latest(events: Sequence[Event]) -> Event | None:
    for event in reversed(events):
        if event.actions.compaction is not None:
            return event
    return None


def to_cover(config: EventsCompactionConfig, events: Sequence[Event]) -> list[Event]:
    """The events (after the newest summary) that a new summary should fold in; [] for none.

    ``compaction_interval`` new invocations (beyond the ``overlap_size`` newest ones,
    which stay verbatim) trigger a summary; so does a model request of
    ``token_threshold`` prompt tokens, keeping the ``event_retention_size`` newest events.
    """
    latest = _latest(events)
    end = latest.actions.compaction.end_timestamp if latest and latest.actions.compaction else None
    fresh: list[Event] = []
    for event in reversed(events):
        if end is not None and event.timestamp <= end:
            break
        if event.actions.compaction is None and not event.partial:
            fresh.append(event)
    fresh.reverse()
    if config.compaction_interval is not None:
        starts = [i for i, event in enumerate(fresh) if starts_invocation(event)]
        keep = config.overlap_size or 0
        if len(starts) >= config.compaction_interval + keep:
            return fresh[: starts[len(starts) - keep]] if keep else fresh
    if config.token_threshold is not None:
        tokens = next(
            (
                e.usage_metadata.prompt_token_count
                for e in reversed(fresh)
                if e.usage_metadata is not None and e.usage_metadata.prompt_token_count
            ),
            0,
        )
        retain = config.event_retention_size or 0
        if tokens >= config.token_threshold and len(fresh) > retain:
            return fresh[: len(fresh) - retain]
    return []


async def compact(
    config: EventsCompactionConfig,
    summarizer: BaseEventsSummarizer,
    events: Sequence[Event],
) -> Event | None:
    """A compaction event for ``events`` (a session's whole history), if one is due."""
    covered = to_cover(config, events)
    if not covered:
        return None
    latest = _latest(events)
    folded = [latest, *covered] if latest is not None else covered
    summary = await summarizer.maybe_summarize_events(events=folded)
    if summary is None or summary.actions.compaction is None:
        return None
    previous = latest.actions.compaction if latest is not None else None
    start = previous.start_timestamp if previous is not None else covered[0].timestamp
    content = summary.actions.compaction.compacted_content or types.Content(role="model", parts=[])
    return Event(
        author="user",
        invocation_id=covered[-1].invocation_id,
        actions=EventActions(
            compaction=EventCompaction(
                start_timestamp=start,
                end_timestamp=covered[-1].timestamp,
                compacted_content=content,
            )
        ),
    )
