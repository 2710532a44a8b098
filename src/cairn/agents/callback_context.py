"""ADK's path for `CallbackContext`: the context a callback gets (an alias of `Context`)."""

from cairn.agents.context import CallbackContext

__all__ = ["CallbackContext"]
