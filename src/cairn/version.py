"""cairn's version (ADK's `google.adk.version` path)."""

__version__ = "0.1.0"
