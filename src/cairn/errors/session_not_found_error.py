"""ADK's path for `SessionNotFoundError`."""

from cairn.errors import SessionNotFoundError

__all__ = ["SessionNotFoundError"]
