"""ADK's `google.adk.utils` path: the helpers ADK apps import from it."""
