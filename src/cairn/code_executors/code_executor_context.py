"""What a code executor keeps in session state between runs, under ADK's keys."""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import MutableMapping
from typing import Any

from cairn.code_executors.code_execution_utils import File
from cairn.sessions.state import State

CONTEXT_KEY = "_code_execution_context"
"""The executor's own record: its execution id and the input files already described."""
INPUT_FILES_KEY = "_code_executor_input_files"
ERROR_COUNTS_KEY = "_code_executor_error_counts"
RESULTS_KEY = "_code_execution_results"

_EXECUTION_ID = "execution_session_id"
_PROCESSED_FILES = "processed_input_files"


class CodeExecutorContext:
    """A code executor's record in session state (ADK's class and keys).

    Every change is an assignment to ``session_state`` (copies are edited, never the
    values read), so with a cairn ``State`` it is recorded as a state delta and becomes
    durable with the event that carries it.
    """

    def __init__(self, session_state: State | MutableMapping[str, Any]) -> None:
        self._session_state = session_state
        stored = session_state.get(CONTEXT_KEY)
        self._context: dict[str, Any] = copy.deepcopy(stored) if isinstance(stored, dict) else {}

    def get_state_delta(self) -> dict[str, Any]:
        """The executor's record, as the state delta that stores it."""
        return {CONTEXT_KEY: copy.deepcopy(self._context)}

    def get_execution_id(self) -> str | None:
        value = self._context.get(_EXECUTION_ID)
        return value if isinstance(value, str) else None

    def set_execution_id(self, session_id: str) -> None:
        self._context[_EXECUTION_ID] = session_id

    def get_processed_file_names(self) -> list[str]:
        return list(self._context.get(_PROCESSED_FILES) or [])

    def add_processed_file_names(self, file_names: list[str]) -> None:
        self._context[_PROCESSED_FILES] = [*self.get_processed_file_names(), *file_names]

    def get_input_files(self) -> list[File]:
        stored = self._session_state.get(INPUT_FILES_KEY) or []
        return [File(**file) for file in stored]

    def add_input_files(self, input_files: list[File]) -> None:
        stored = list(self._session_state.get(INPUT_FILES_KEY) or [])
        stored.extend(dataclasses.asdict(file) for file in input_files)
        self._session_state[INPUT_FILES_KEY] = stored

    def clear_input_files(self) -> None:
        if INPUT_FILES_KEY in self._session_state:
            self._session_state[INPUT_FILES_KEY] = []
        if _PROCESSED_FILES in self._context:
            self._context[_PROCESSED_FILES] = []

    def get_error_count(self, invocation_id: str) -> int:
        counts = self._session_state.get(ERROR_COUNTS_KEY) or {}
        return int(counts.get(invocation_id, 0))

    def increment_error_count(self, invocation_id: str) -> None:
        counts = dict(self._session_state.get(ERROR_COUNTS_KEY) or {})
        counts[invocation_id] = self.get_error_count(invocation_id) + 1
        self._session_state[ERROR_COUNTS_KEY] = counts

    def reset_error_count(self, invocation_id: str) -> None:
        counts = self._session_state.get(ERROR_COUNTS_KEY)
        if not counts or invocation_id not in counts:
            return
        self._session_state[ERROR_COUNTS_KEY] = {
            key: value for key, value in counts.items() if key != invocation_id
        }

    def update_code_execution_result(
        self, invocation_id: str, code: str, result_stdout: str, result_stderr: str
    ) -> None:
        """Add a run to the invocation's list in state (ADK's; cairn's agents do not call it:
        every run is an event in the log already)."""
        results = dict(self._session_state.get(RESULTS_KEY) or {})
        runs = list(results.get(invocation_id) or [])
        runs.append(
            {
                "code": code,
                "result_stdout": result_stdout,
                "result_stderr": result_stderr,
                "timestamp": int(time.time()),
            }
        )
        results[invocation_id] = runs
        self._session_state[RESULTS_KEY] = results


__all__ = ["CodeExecutorContext"]
