"""A model agent whose tool blocks until the file the message names exists (a test's gate)."""

import asyncio
from pathlib import Path
from typing import Any

from cairn import Agent, FunctionTool
from cairn.models.llm_request import LlmRequest
from cairn.testing import Call, ScriptedLlm


async def wait_for_release(flag: str) -> dict[str, Any]:
    """Wait until the file ``flag`` exists."""
    while not Path(flag).exists():
        await asyncio.sleep(0.05)
    return {"released": flag}


def respond(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if any(part.function_response for part in last.parts or []):
        return "released"
    return Call("wait_for_release", flag=last.parts[0].text)  # type: ignore[index]


root_agent = Agent(
    name="gate",
    model=ScriptedLlm(respond=respond),
    tools=[FunctionTool(wait_for_release)],
)
