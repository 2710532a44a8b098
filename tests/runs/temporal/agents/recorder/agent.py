"""The Temporal tests' agent: one tool call per run, with gates the test holds.

The user's message is a note. The model's first turn of a run calls ``record(note)``; its
turn after the result says ``recorded <note>``. Both steps write a row to ``steps``
(kind, note, call id, pid) and then wait while the test holds the note's PostgreSQL
advisory lock of that kind, so the test knows where a run is and when to let it go (or to
kill its worker): ``(1, hashtext(note))`` gates the model's first turn, ``(2, ...)`` the
tool. Not idempotent: a call in doubt is never re-run unasked. A note starting with
``ask `` pauses the call for a confirmation first (its step is recorded once confirmed).
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from typing import Any

import asyncpg
from google.genai import types

from cairn import Agent
from cairn.models.base_llm import BaseLlm
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.tools.tool_context import ToolContext

DSN_VARIABLE = "CAIRN_TEST_RECORDER_DSN"
MODEL_GATE = 1
TOOL_GATE = 2


async def _step(kind: str, gate: int, note: str, call_id: str | None) -> None:
    """Record that this step started, then wait while the test holds its gate."""
    connection = await asyncpg.connect(os.environ[DSN_VARIABLE])
    try:
        await connection.execute(
            "INSERT INTO steps (kind, note, call_id, pid) VALUES ($1, $2, $3, $4)",
            kind,
            note,
            call_id,
            os.getpid(),
        )
        await connection.execute("SELECT pg_advisory_lock_shared($1, hashtext($2))", gate, note)
    finally:
        await connection.close()


async def record(note: str, tool_context: ToolContext) -> dict[str, Any]:
    """Record the note (an effect outside the log: never to be repeated)."""
    if note.startswith("ask ") and tool_context.tool_confirmation is None:
        tool_context.request_confirmation(hint=f"record {note}?")
        return {}
    await _step("tool", TOOL_GATE, note, tool_context.function_call_id)
    return {"recorded": note}


class GatedModel(BaseLlm):
    """Calls ``record`` with the user's note, then answers once it has the result."""

    model: str = "gated"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        responses = [p.function_response for p in last.parts or [] if p.function_response]
        if responses:
            result = responses[-1].response or {}
            text = f"recorded {result.get('recorded', result.get('result'))}"
            parts = [types.Part(text=text)]
        else:
            note = "".join(p.text or "" for p in last.parts or [])
            await _step("model", MODEL_GATE, note, None)
            parts = [
                types.Part(
                    function_call=types.FunctionCall(
                        id=f"call-{os.urandom(6).hex()}", name="record", args={"note": note}
                    )
                )
            ]
        yield LlmResponse(content=types.Content(role="model", parts=parts), turn_complete=True)


root_agent = Agent(name="recorder", model=GatedModel(), tools=[record])
