"""What the agents of tests/models/local_agents share: the local model server's model (from
the environment, so that `cairn run` and the HTTP server in other processes reach it), a
callback that makes tool turns deterministic, and a record of tool runs across processes.

The 135M model is not reliable at choosing tools, so the tool agents do not leave it to
the model: ``force(name)`` is a ``before_model_callback`` that sets the function-calling
mode of each request, ANY with ``name`` as the one allowed function (the server then
constrains the reply to a call of it) until the turn has a tool result, then NONE (so the
follow-up is text).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from google.genai import types
from tests.support.model_server import BASE_URL_ENV, MODEL_ENV

from cairn.agents.context import Context
from cairn.models.llm_request import LlmRequest
from cairn.models.openai_llm import OpenAILlm

RUNS_ENV = "CAIRN_TEST_TOOL_RUNS"

SETTINGS = types.GenerateContentConfig(temperature=0.0, seed=7, max_output_tokens=64)
"""Short, repeatable replies: the tests assert behaviour, not wording."""


def local_model(**fields: object) -> OpenAILlm:
    """``openai/<model>`` at the local server named by the environment."""
    return OpenAILlm(
        model=f"openai/{os.environ[MODEL_ENV]}",
        base_url=os.environ[BASE_URL_ENV],
        **fields,  # type: ignore[arg-type]
    )


def force(name: str) -> Callable[[Context, LlmRequest], None]:
    """A before_model_callback: call ``name`` until a tool result is in, then answer."""

    def set_mode(callback_context: Context, llm_request: LlmRequest) -> None:
        last = llm_request.contents[-1] if llm_request.contents else None
        answered = last is not None and any(p.function_response for p in last.parts or [])
        if answered:
            calling = types.FunctionCallingConfig(mode=types.FunctionCallingConfigMode.NONE)
        else:
            calling = types.FunctionCallingConfig(
                mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=[name]
            )
        llm_request.config.tool_config = types.ToolConfig(function_calling_config=calling)

    return set_mode


def ran(name: str) -> None:
    """Record one run of tool ``name`` (a line in the file $CAIRN_TEST_TOOL_RUNS names)."""
    path = os.environ.get(RUNS_ENV)
    if path:
        with Path(path).open("a") as file:
            file.write(name + "\n")


def runs(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []
