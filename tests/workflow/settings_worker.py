"""Run by test_workflow_settings.py in its own process: start, continue or answer a workflow
with a timeout, retries and an input schema. Every body appends a line to a file (the side
effect whose count the test checks). FLAKY=<c1,c2,...> says what each call of ``flaky`` does
in turn: ``fail`` raises, ``crash`` kills the process, ``ask`` pauses for input, ``ok``
returns."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from google.genai import types
from pydantic import BaseModel

from cairn import Runner
from cairn.sessions.factory import session_service_from_url
from cairn.workflow import START, RequestInput, RetryConfig, Workflow, node

LOG = Path(os.environ["SETTINGS_LOG"])
PLAN = os.environ["FLAKY"].split(",")


class Order(BaseModel):
    item: str
    quantity: int


def record(line: str) -> int:
    """Append ``line``; how many times it is in the log now."""
    with LOG.open("a") as log:
        log.write(line + "\n")
    return LOG.read_text().splitlines().count(line)


def first(node_input: dict[str, Any]) -> str:
    record("first")
    return f"{node_input['quantity']} x {node_input['item']}"


@node(rerun_on_resume=True)
def flaky(ctx: Any, node_input: str):  # type: ignore[no-untyped-def]
    if ctx.resume_inputs:
        yield f"{node_input}: {ctx.resume_inputs['confirm']}"
        return
    what = PLAN[record("flaky") - 1]
    if what == "crash":
        os._exit(17)
    if what == "fail":
        raise ValueError("flaky failed")
    if what == "ask":
        yield RequestInput(interrupt_id="confirm", message="confirm?")
        return
    yield f"{node_input}: ok"


async def main(store_url: str, mode: str, attempts: int) -> None:
    workflow = Workflow(
        name="orders",
        edges=[(START, first, flaky)],
        input_schema=Order,
        timeout=60,
        retry_config=RetryConfig(max_attempts=attempts, initial_delay=0, jitter=0),
    )
    store = session_service_from_url(store_url)
    runner = Runner(app_name="orders", agent=workflow, session_service=store)
    if await store.get_session(app_name="orders", user_id="u", session_id="s") is None:
        await store.create_session(app_name="orders", user_id="u", session_id="s")
    kwargs: dict[str, Any] = {}
    if mode.startswith("start"):
        text = '{"item": "tea", "quantity": "2"}'
        kwargs["new_message"] = types.Content(role="user", parts=[types.Part(text=text)])
    elif mode == "continue":  # the invocation a killed process left unfinished
        session = await store.get_session(app_name="orders", user_id="u", session_id="s")
        assert session is not None
        kwargs["invocation_id"] = session.events[-1].invocation_id
    else:
        reply = types.FunctionResponse(
            id="confirm", name="adk_request_input", response={"result": "yes"}
        )
        kwargs["new_message"] = types.Content(
            role="user", parts=[types.Part(function_response=reply)]
        )
    try:
        async for event in runner.run_async(user_id="u", session_id="s", **kwargs):
            if event.long_running_tool_ids:
                print("PAUSED")
            if "orders@1" in (event.node_info.output_for or []) and event.output is not None:
                print(f"OUTPUT {event.output}")
    except ValueError as error:
        print(f"FAILED {error}")
    await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
