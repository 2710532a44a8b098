"""`exit_loop`: the tool an agent inside a `LoopAgent` calls to end the loop."""

from __future__ import annotations

from typing import Any


def exit_loop(tool_context: Any) -> None:
    """Ends the loop this agent runs in. Call it only when you are told to."""
    tool_context.actions.escalate = True
    tool_context.actions.skip_summarization = True


__all__ = ["exit_loop"]
