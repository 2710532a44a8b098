"""MultimodalToolResultsPlugin: a tool may return ``types.Part`` objects for the model to see.

A function tool's result is JSON; a tool that produces an image, a document or text meant
as content returns a ``types.Part`` (or a list of them) instead, and this plugin attaches
those parts to the next model request, after the function response.
"""

from __future__ import annotations

from typing import Any, Literal

from google.genai import types

from cairn.agents.context import Context
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.plugins.base_plugin import BasePlugin
from cairn.tools.base_tool import BaseTool

PARTS_RETURNED_BY_TOOLS_ID = "temp:PARTS_RETURNED_BY_TOOLS_ID"
"""Where the parts wait for the next model call (invocation-scoped, never stored)."""
SESSION_PARTS_RETURNED_BY_TOOLS_ID = "multimodal_tool_results_plugin:PARTS_RETURNED_BY_TOOLS_ID"
"""Where ``retention="session"`` keeps the latest parts (session state, as JSON)."""
_CURRENT_TURN_PARTS_ID = "temp:multimodal_tool_results_plugin:current_turn_parts"
_SESSION_UPDATED_KEY = "temp:multimodal_tool_results_plugin:updated_in_invocation"


class MultimodalToolResultsPlugin(BasePlugin):
    """Attaches the parts tools return to the model's next request.

    ``retention="next_model_call"`` (the default) attaches them once. ``"session"`` also
    keeps the latest file and text parts in session state (recorded in the log) and attaches
    them to every later request of the session; inline bytes are attached only once.
    """

    def __init__(
        self,
        name: str = "multimodal_tool_results_plugin",
        *,
        retention: Literal["next_model_call", "session"] = "next_model_call",
    ) -> None:
        if retention not in ("next_model_call", "session"):
            raise ValueError(f"retention must be 'next_model_call' or 'session', got {retention!r}")
        super().__init__(name)
        self._retention = retention

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: Context,
        result: Any,
    ) -> dict[str, Any] | None:
        parts = _parts_of(result)
        if parts is None:
            return None
        state = tool_context.state
        if self._retention == "session":
            kept = [
                p.model_dump(mode="json", exclude_none=True) for p in parts if p.inline_data is None
            ]
            if kept:
                if _SESSION_UPDATED_KEY in state:
                    state[SESSION_PARTS_RETURNED_BY_TOOLS_ID] = [
                        *state.get(SESSION_PARTS_RETURNED_BY_TOOLS_ID, []),
                        *kept,
                    ]
                else:  # this invocation's first: the latest parts replace older ones
                    state[_SESSION_UPDATED_KEY] = True
                    state[SESSION_PARTS_RETURNED_BY_TOOLS_ID] = kept
            state[_CURRENT_TURN_PARTS_ID] = [*state.get(_CURRENT_TURN_PARTS_ID, []), *parts]
        else:
            state[PARTS_RETURNED_BY_TOOLS_ID] = [
                *state.get(PARTS_RETURNED_BY_TOOLS_ID, []),
                *parts,
            ]
        return None

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        if not llm_request.contents:
            return None
        state = callback_context.state
        attach: list[types.Part]
        if self._retention == "session":
            current = list(state.get(_CURRENT_TURN_PARTS_ID) or [])
            kept = [
                types.Part.model_validate(p) if isinstance(p, dict) else p
                for p in state.get(SESSION_PARTS_RETURNED_BY_TOOLS_ID) or []
            ]
            attach = [p for p in kept if p not in current] + current
            if current:
                state[_CURRENT_TURN_PARTS_ID] = []
        else:
            attach = list(state.get(PARTS_RETURNED_BY_TOOLS_ID) or [])
            if attach:
                state[PARTS_RETURNED_BY_TOOLS_ID] = []
        if attach:
            last = llm_request.contents[-1]
            llm_request.contents[-1] = last.model_copy(
                update={"parts": [*(last.parts or []), *attach]}
            )
        return None


def _parts_of(result: Any) -> list[types.Part] | None:
    if isinstance(result, types.Part):
        return [result]
    if isinstance(result, list) and result and all(isinstance(p, types.Part) for p in result):
        return list(result)
    return None
