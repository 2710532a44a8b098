"""Code execution done by the model itself (Gemini's code-execution tool)."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from google.genai import types

from cairn.code_executors.base_code_executor import BaseCodeExecutor
from cairn.code_executors.code_execution_utils import CodeExecutionInput, CodeExecutionResult
from cairn.code_executors.errors import CodeExecutorError

if TYPE_CHECKING:
    from cairn.agents.invocation_context import InvocationContext
    from cairn.models.llm_request import LlmRequest

MODEL_CHECK_OFF = "ADK_DISABLE_GEMINI_MODEL_ID_CHECK"
"""An environment variable (ADK's): set to true or 1, any model name is taken for Gemini."""


def is_gemini_model(model: str | None) -> bool:
    """Whether ``model`` names a Gemini model: ``gemini-...``, also under ``models/``, a
    Vertex AI resource path (``projects/.../models/gemini-...``) or a provider prefix
    (``gemini/gemini-...``)."""
    if not model:
        return False
    name = model.rsplit("/", 1)[-1]
    return re.match(r"gemini-", name) is not None


def _model_check_off() -> bool:
    return os.environ.get(MODEL_CHECK_OFF, "").strip().lower() in ("1", "true")


class BuiltInCodeExecutor(BaseCodeExecutor):
    """The model writes and runs the code (Gemini's code-execution tool): the request
    declares that tool, and the reply's ``executable_code`` and ``code_execution_result``
    parts are kept on its event as the model sent them. Images the model's code made are
    saved as artifacts. Nothing runs locally."""

    def execute_code(
        self,
        invocation_context: InvocationContext,
        code_execution_input: CodeExecutionInput,
    ) -> CodeExecutionResult:
        raise CodeExecutorError(
            "BuiltInCodeExecutor runs nothing locally: the model executes the code itself. "
            "Use UnsafeLocalCodeExecutor or ContainerCodeExecutor to run code here."
        )

    def process_llm_request(self, llm_request: LlmRequest) -> None:
        """Declare Gemini's code-execution tool in ``llm_request``."""
        if not (is_gemini_model(llm_request.model) or _model_check_off()):
            raise CodeExecutorError(
                f"BuiltInCodeExecutor needs a Gemini model (its code-execution tool), but the "
                f"agent's model is {llm_request.model!r}. Use a 'gemini-...' model, or run the "
                "code here with UnsafeLocalCodeExecutor or ContainerCodeExecutor."
            )
        if llm_request.config.tools is None:
            llm_request.config.tools = []
        llm_request.config.tools.append(types.Tool(code_execution=types.ToolCodeExecution()))


__all__ = ["BuiltInCodeExecutor"]
