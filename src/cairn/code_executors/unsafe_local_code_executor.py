"""Running model-written code in a child process of this one: no sandbox, for trusted use."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from cairn.code_executors._local_run import run_python
from cairn.code_executors.base_code_executor import BaseCodeExecutor
from cairn.code_executors.code_execution_utils import CodeExecutionInput, CodeExecutionResult

if TYPE_CHECKING:
    from cairn.agents.invocation_context import InvocationContext

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 300
DEFAULT_MAX_OUTPUT_BYTES = 100_000
DEFAULT_MAX_OUTPUT_FILE_BYTES = 10 * 1024 * 1024


def bounded_run_settings(executor: str, data: Any) -> Any:
    """Check the settings a local or container run is bounded by, with errors that say how
    to fix them (every such run has a finite timeout; it cannot keep state between runs)."""
    if not isinstance(data, dict):
        return data
    for flag in ("stateful", "optimize_data_file"):
        if data.get(flag):
            raise ValueError(f"{executor} cannot have {flag}=True; leave it False")
    if "timeout_seconds" in data and data["timeout_seconds"] is None:
        raise ValueError(
            f"{executor}(timeout_seconds=None): every run of model-written code is bounded; "
            f"give a number of seconds (default {DEFAULT_TIMEOUT_SECONDS})"
        )
    return data


class UnsafeLocalCodeExecutor(BaseCodeExecutor):
    """Runs each piece of code with this Python, in a child process in a new temporary
    working directory (the input files are there; files the code leaves there are its
    output files, saved as artifacts).

    Unsafe: the code can do anything this process can (read files, use the network, see
    the environment). Use it only where the model and what it reads are trusted; otherwise
    use ``ContainerCodeExecutor``.

    Every run is bounded: it is killed, with everything it started, after
    ``timeout_seconds``; at most ``max_output_bytes`` of its stdout and of its stderr are
    kept (a note says how much was cut) and at most ``max_output_file_bytes`` of output
    files in all.
    """

    stateful: bool = Field(default=False, frozen=True, exclude=True)
    optimize_data_file: bool = Field(default=False, frozen=True, exclude=True)
    timeout_seconds: float = Field(default=DEFAULT_TIMEOUT_SECONDS, gt=0)
    """Seconds one run may take before it is killed (with what it started)."""
    max_output_bytes: int = Field(default=DEFAULT_MAX_OUTPUT_BYTES, gt=0)
    """cairn: bytes of stdout, and of stderr, kept from one run (the rest is counted and
    dropped, and a note says so)."""
    max_output_file_bytes: int = Field(default=DEFAULT_MAX_OUTPUT_FILE_BYTES, ge=0)
    """cairn: bytes of output files saved from one run, in all (files over it are named in
    the output instead)."""

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: Any) -> Any:
        return bounded_run_settings(cls.__name__, data)

    def execute_code(
        self,
        invocation_context: InvocationContext,
        code_execution_input: CodeExecutionInput,
    ) -> CodeExecutionResult:
        logger.debug("running code locally:\n%s", code_execution_input.code)
        return run_python(
            code_execution_input.code,
            input_files=code_execution_input.input_files,
            timeout_seconds=self.timeout_seconds,
            max_output_bytes=self.max_output_bytes,
            max_output_file_bytes=self.max_output_file_bytes,
        )


__all__ = ["UnsafeLocalCodeExecutor"]
