"""Helpers that ADK apps' own scripts call (ADK's `google.adk.cli.utils` path)."""
