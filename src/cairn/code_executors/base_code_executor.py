"""The base of code executors: what runs the code blocks an agent's model writes."""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from cairn.code_executors.code_execution_utils import CodeExecutionInput, CodeExecutionResult

if TYPE_CHECKING:
    from cairn.agents.invocation_context import InvocationContext


class BaseCodeExecutor(BaseModel, abc.ABC):
    """Runs code from model replies; set one as ``LlmAgent(code_executor=...)``.

    The agent finds the first code block of a reply (text between one of
    ``code_block_delimiters``, or an ``executable_code`` part), records it as
    an ``executable_code`` part, runs it with ``execute_code`` and records the
    result as a ``code_execution_result`` part; the model then sees both (the
    code between the first delimiters, the result between
    ``execution_result_delimiters``) and goes on. After
    ``error_retry_attempts`` failed runs in a row within an invocation, code in
    a reply is no longer run.

    A run that started but has no recorded result (the process died) is never
    silently run again: it is run again on resume only if ``idempotent`` is
    True, else the invocation asks the caller (an ``in_doubt`` interrupt).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    optimize_data_file: bool = False
    """Hand CSV files the user sent to the code as files (``data_<turn>_<part>.csv``), after
    a first run that describes each of them to the model (the code needs pandas)."""
    stateful: bool = False
    """Whether runs of a session share their interpreter state (the executor keeps it, by
    ``CodeExecutionInput.execution_id``, the session's id)."""
    error_retry_attempts: int = Field(default=2, ge=0)
    """Failed runs in a row (in one invocation) after which code is no longer run."""
    code_block_delimiters: list[tuple[str, str]] = Field(
        default_factory=lambda: [("```tool_code\n", "\n```"), ("```python\n", "\n```")]
    )
    """(opening, closing) pairs that enclose code in a reply; the first pair is how code is
    shown back to the model."""
    execution_result_delimiters: tuple[str, str] = ("```tool_output\n", "\n```")
    """(opening, closing) around a run's output, as the model is shown it."""
    timeout_seconds: float | None = None
    """How long one run may take; an executor that runs code itself bounds every run."""
    idempotent: bool = False
    """cairn: running a piece of code twice is harmless, so a run found in doubt after a
    crash simply runs again (as ``FunctionTool(..., idempotent=True)``)."""

    @abc.abstractmethod
    def execute_code(
        self,
        invocation_context: InvocationContext,
        code_execution_input: CodeExecutionInput,
    ) -> CodeExecutionResult:
        """Run ``code_execution_input.code`` and return what it printed and wrote.

        Called on a worker thread (never on the event loop). A failure of the code is a
        result with ``stderr`` set, not an exception.
        """


__all__ = ["BaseCodeExecutor"]
