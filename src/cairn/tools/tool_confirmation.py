"""ADK's path for `ToolConfirmation`: a person's answer to a tool's confirmation request."""

from cairn.events.event_actions import ToolConfirmation

__all__ = ["ToolConfirmation"]
