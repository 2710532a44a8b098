"""Apps and app-wide configuration."""

from cairn.apps.app import App, EventsCompactionConfig, ResumabilityConfig
from cairn.apps.llm_event_summarizer import BaseEventsSummarizer, LlmEventSummarizer

__all__ = [
    "App",
    "BaseEventsSummarizer",
    "EventsCompactionConfig",
    "LlmEventSummarizer",
    "ResumabilityConfig",
]
