"""Run by test_resume_processes.py in its own process: start a workflow or resume it."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from google.genai import types

from cairn import Runner
from cairn.sessions.factory import session_service_from_url
from cairn.workflow import START, RequestInput, Workflow

NAMES = ("a", "b", "c", "d")


def make(name: str, pause_at: str) -> Any:
    def body(node_input: str, ctx: Any):  # type: ignore[no-untyped-def]
        ctx.state[f"count_{name}"] = ctx.state.get(f"count_{name}", 0) + 1
        if name == pause_at:
            yield RequestInput(interrupt_id=f"pause-{name}", message=f"answer for {name}")
            return
        yield f"{node_input}>{name}"

    body.__name__ = name
    return body


def finish(node_input: str) -> str:
    """The last node: an answer taken as d's output still reaches an output event."""
    return node_input


async def main(store_url: str, pause_at: str, mode: str) -> None:
    nodes = [make(n, pause_at) for n in NAMES]
    workflow = Workflow(name="chain", edges=[(START, *nodes, finish)])
    store = session_service_from_url(store_url)
    runner = Runner(
        app_name="resume", agent=workflow, session_service=store, auto_create_session=True
    )
    if mode == "start":
        message = types.Content(role="user", parts=[types.Part(text="in")])
    else:
        reply = types.FunctionResponse(
            id=f"pause-{pause_at}", name="adk_request_input", response={"result": "ANSWER"}
        )
        message = types.Content(role="user", parts=[types.Part(function_response=reply)])
    async for event in runner.run_async(user_id="u", session_id="s", new_message=message):
        if "chain@1" in (event.node_info.output_for or []):
            print(f"OUTPUT {event.output}")
    await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
