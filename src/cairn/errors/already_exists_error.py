"""ADK's path for `AlreadyExistsError`."""

from cairn.errors import AlreadyExistsError

__all__ = ["AlreadyExistsError"]
