"""GlobalInstructionPlugin: one instruction for every agent of the app, before its own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from google.genai import types

from cairn.agents.context import Context
from cairn.agents.instructions import inject_session_state
from cairn.agents.readonly_context import ReadonlyContext
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.plugins.base_plugin import BasePlugin
from cairn.user_code import call_user_code

InstructionProvider = Callable[[ReadonlyContext], "str | Awaitable[str]"]


class GlobalInstructionPlugin(BasePlugin):
    """Puts ``global_instruction`` before the system instruction of every model call.

    A string has ``{key}`` filled from state, as an agent's instruction does; a function
    of a ``ReadonlyContext`` (sync or async) returns the text as is. ADK's replacement for
    ``LlmAgent.global_instruction``.
    """

    def __init__(
        self, global_instruction: str | InstructionProvider = "", name: str = "global_instruction"
    ) -> None:
        super().__init__(name=name)
        self.global_instruction = global_instruction

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> LlmResponse | None:
        if not self.global_instruction:
            return None
        readonly = ReadonlyContext(callback_context.invocation_context)
        if isinstance(self.global_instruction, str):
            text = await inject_session_state(
                self.global_instruction, readonly, agent_name=callback_context.agent_name
            )
        else:
            text = str(await call_user_code(self.global_instruction, readonly))
        if not text:
            return None
        existing = llm_request.config.system_instruction
        llm_request.config.system_instruction = _prepend(text, existing)
        return None


def _prepend(text: str, existing: types.ContentUnion | None) -> types.ContentUnion:
    """``text`` before ``existing``, keeping the shape ``existing`` has."""
    if not existing:
        return text
    if isinstance(existing, str):
        return f"{text}\n\n{existing}"
    if isinstance(existing, types.Content):
        return existing.model_copy(
            update={"parts": [types.Part(text=text), *(existing.parts or [])]}
        )
    if isinstance(existing, list):
        return [text, *existing]
    return [text, existing]
