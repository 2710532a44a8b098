"""Apps and app-wide configuration."""

from cairn.apps.app import App, EventsCompactionConfig, ResumabilityConfig

__all__ = ["App", "EventsCompactionConfig", "ResumabilityConfig"]
