"""ADK's ``google.adk.labs`` paths that cairn provides (``cairn.labs.openai``)."""
