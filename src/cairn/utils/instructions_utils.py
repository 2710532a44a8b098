"""ADK's path for `inject_session_state`: fill a template's `{key}` from session state."""

from cairn.agents.instructions import inject_session_state
from cairn.agents.llm_agent import InstructionProvider
from cairn.agents.readonly_context import ReadonlyContext

__all__ = ["InstructionProvider", "ReadonlyContext", "inject_session_state"]
