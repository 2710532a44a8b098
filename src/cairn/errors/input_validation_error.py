"""ADK's path for `InputValidationError`."""

from cairn.errors import InputValidationError

__all__ = ["InputValidationError"]
