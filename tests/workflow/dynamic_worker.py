"""Run by test_dynamic_nodes.py in its own process: start, continue or answer a workflow whose
node runs others with ctx.run_node (or, with DYNAMIC_APP=tool, an LlmAgent calling that
workflow as a tool). Every body appends a line to a file (the side effect whose count the
test checks); CRASH_AT=<n> makes step n kill the process before its own."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from google.genai import types

from cairn import LlmAgent, Runner
from cairn.models.llm_request import LlmRequest
from cairn.sessions.factory import session_service_from_url
from cairn.testing import Call, ScriptedLlm
from cairn.workflow import START, RequestInput, Workflow, node

LOG = Path(os.environ["DYNAMIC_LOG"])


def record(line: str) -> None:
    with LOG.open("a") as log:
        log.write(line + "\n")


def step(node_input: int) -> int:
    if os.environ.get("CRASH_AT") == str(node_input):
        os._exit(17)  # killed before this body's effect: it has to run once on resume
    record(f"step {node_input}")
    return node_input * 10


def ask(node_input: Any):  # type: ignore[no-untyped-def]
    record("ask")
    yield RequestInput(interrupt_id="go-on", message="go on?")


@node(rerun_on_resume=True)
async def plan(ctx: Any, node_input: str) -> str:
    record("plan")
    total = 0
    for number in (1, 2, 3):
        total += await ctx.run_node(step, node_input=number)
    answer = await ctx.run_node(ask)
    for number in (4, 5):
        total += await ctx.run_node(step, node_input=number)
    return f"{answer}:{total}"


def planner_model(request: LlmRequest) -> Any:
    """Calls the planner workflow, then reports what it answered (the same in any process)."""
    last = request.contents[-1].parts[0] if request.contents[-1].parts else None
    if last is not None and last.function_response is not None:
        return f"planned {last.function_response.response}"
    return Call("planner", id="plan-call", request="plan")


async def main(store_url: str, mode: str) -> None:
    workflow = Workflow(name="planner", description="Plans.", edges=[(START, plan)])
    agent: Any = workflow
    if os.environ.get("DYNAMIC_APP") == "tool":
        agent = LlmAgent(name="boss", model=ScriptedLlm(respond=planner_model), tools=[workflow])
    store = session_service_from_url(store_url)
    runner = Runner(
        app_name="dynamic", agent=agent, session_service=store, auto_create_session=True
    )
    kwargs: dict[str, Any] = {}
    if mode == "start":
        kwargs["new_message"] = types.Content(role="user", parts=[types.Part(text="plan")])
    elif mode == "continue":  # the invocation a killed process left unfinished
        session = await store.get_session(app_name="dynamic", user_id="u", session_id="s")
        assert session is not None
        kwargs["invocation_id"] = session.events[-1].invocation_id
    else:
        reply = types.FunctionResponse(
            id="go-on", name="adk_request_input", response={"result": "yes"}
        )
        kwargs["new_message"] = types.Content(
            role="user", parts=[types.Part(function_response=reply)]
        )
    async for event in runner.run_async(user_id="u", session_id="s", **kwargs):
        if event.long_running_tool_ids:
            print("PAUSED")
        if "planner@1" in (event.node_info.output_for or []):
            print(f"OUTPUT {event.output}")
        if event.content is not None and event.content.parts and event.content.parts[0].text:
            print(f"SAID {event.content.parts[0].text}")
    await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
