"""The server's routes, one module per group (ADK's sessions, run, artifacts; cairn's own)."""
