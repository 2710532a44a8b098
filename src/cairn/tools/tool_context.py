"""ADK's path for `ToolContext`: the context a tool gets (an alias of `Context`)."""

from cairn.agents.context import CallbackContext, ToolContext

__all__ = ["CallbackContext", "ToolContext"]
