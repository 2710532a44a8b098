"""ADK's path for `NotFoundError`."""

from cairn.errors import NotFoundError

__all__ = ["NotFoundError"]
