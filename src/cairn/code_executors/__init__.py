"""Code executors: what runs the code an LLM agent's model writes (``LlmAgent.code_executor``).

``ContainerCodeExecutor`` needs the ``docker`` package (``pip install 'cairn[docker]'``),
imported only when such an executor is made.
"""

from cairn.code_executors.base_code_executor import BaseCodeExecutor
from cairn.code_executors.built_in_code_executor import BuiltInCodeExecutor
from cairn.code_executors.code_execution_utils import (
    CodeExecutionInput,
    CodeExecutionResult,
    CodeExecutionUtils,
    File,
)
from cairn.code_executors.code_executor_context import CodeExecutorContext
from cairn.code_executors.container_code_executor import ContainerCodeExecutor
from cairn.code_executors.errors import CodeExecutorError, ContainerEngineUnavailableError
from cairn.code_executors.unsafe_local_code_executor import UnsafeLocalCodeExecutor

__all__ = [
    "BaseCodeExecutor",
    "BuiltInCodeExecutor",
    "CodeExecutionInput",
    "CodeExecutionResult",
    "CodeExecutionUtils",
    "CodeExecutorContext",
    "CodeExecutorError",
    "ContainerCodeExecutor",
    "ContainerEngineUnavailableError",
    "File",
    "UnsafeLocalCodeExecutor",
]
