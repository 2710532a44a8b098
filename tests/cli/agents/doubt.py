"""Acts out a process that died inside a tool call, and the resume that follows.

The first run stops with ``charge`` called and no result recorded (as if the
process had been killed): the session lists the invocation as interrupted.
Continuing it asks whether to re-run the call or take a supplied result
(``cairn_resolve_in_doubt``), as the LlmAgent does for a tool that is not idempotent.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

from google.genai import types
from scripted import ran

from cairn import BaseAgent, Event, InvocationContext

CALL = types.FunctionCall(id="call-charge", name="charge", args={"amount": 30})


def _event(part: types.Part, waiting: set[str] | None = None) -> Event:
    return Event(content=types.Content(role="model", parts=[part]), long_running_tool_ids=waiting)


class Doubtful(BaseAgent):
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        mine = [e for e in ctx.session.events if e.invocation_id == ctx.invocation_id]
        calls = {c.id for e in mine for c in e.get_function_calls()}
        answers = {r.id: r.response for e in mine for r in e.get_function_responses()}
        if CALL.id not in calls:
            yield _event(types.Part(function_call=CALL))
            return
        if "doubt-charge" not in calls:
            ask = types.FunctionCall(
                id="doubt-charge",
                name="cairn_resolve_in_doubt",
                args={
                    "originalFunctionCall": CALL.model_dump(exclude_none=True),
                    "message": "charge(amount=30) started but its result was never recorded",
                },
            )
            yield _event(types.Part(function_call=ask), {"doubt-charge"})
            return
        answer: dict[str, Any] = answers["doubt-charge"] or {}
        if answer.get("rerun"):
            ran("charge")
            result = {"charged": 30}
        else:
            result = answer["result"]
        response = types.FunctionResponse(id=CALL.id, name=CALL.name, response=result)
        yield Event(
            content=types.Content(role="user", parts=[types.Part(function_response=response)])
        )
        yield _event(types.Part(text="charge: " + json.dumps(result, sort_keys=True)))


root_agent = Doubtful(name="cashier")
