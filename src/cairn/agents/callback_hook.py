"""Which callback is running: what a callback reads from its context's ``callback_info``."""

from __future__ import annotations

import dataclasses
import enum


class CallbackHook(enum.StrEnum):
    """The point of an LLM agent's run a callback is called at."""

    BEFORE_MODEL = "before_model"
    AFTER_MODEL = "after_model"
    ON_MODEL_ERROR = "on_model_error"
    BEFORE_TOOL = "before_tool"
    AFTER_TOOL = "after_tool"
    ON_TOOL_ERROR = "on_tool_error"


@dataclasses.dataclass(frozen=True)
class CallbackInfo:
    """Set on the context a callback is given, while that callback runs (None otherwise:
    in the tool itself, and once the callback returned)."""

    hook: CallbackHook
