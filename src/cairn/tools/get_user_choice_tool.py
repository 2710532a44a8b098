"""``get_user_choice``: the model offers the user options and waits for their pick."""

from __future__ import annotations

from typing import Any

from cairn.tools.function_tool import LongRunningFunctionTool


def get_user_choice(options: list[str], tool_context: Any) -> str | None:
    """Provides the options to the user and asks them to choose one."""
    tool_context.actions.skip_summarization = True
    return None


get_user_choice_tool = LongRunningFunctionTool(func=get_user_choice)
"""A long-running tool: the call pauses the invocation until the client sends the user's
choice as the call's ``FunctionResponse`` (``cairn.tools.get_user_choice`` is this tool)."""


__all__ = ["get_user_choice", "get_user_choice_tool"]
