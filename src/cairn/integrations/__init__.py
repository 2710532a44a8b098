"""Integrations at ADK's ``google.adk.integrations`` paths (``cairn.integrations.openai``)."""
