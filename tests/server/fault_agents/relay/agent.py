"""A model agent that runs one tool (each run of it recorded in a file), then waits in its
next model call until a flag file exists: a run that committed finished work and is surely
still running while a test kills its server.

The message is a folder: the tool appends to ``<folder>/runs.txt``, the model waits for
``<folder>/release``.
"""

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from cairn import Agent, FunctionTool
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.testing import Call, ScriptedLlm


async def note(folder: str) -> dict[str, Any]:
    """Record that the tool ran."""
    with (Path(folder) / "runs.txt").open("a", encoding="utf-8") as runs:
        runs.write("ran\n")
    return {"folder": folder}


def respond(request: LlmRequest) -> Any:
    last = request.contents[-1]
    if any(part.function_response for part in last.parts or []):
        return "relayed"
    return Call("note", folder=last.parts[0].text)  # type: ignore[index]


class RelayLlm(ScriptedLlm):
    """After the tool's result, answers once ``<folder>/release`` exists."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        for part in last.parts or []:
            if part.function_response is not None:
                flag = Path(str((part.function_response.response or {})["folder"])) / "release"
                while not flag.exists():
                    await asyncio.sleep(0.05)
        async for response in super().generate_content_async(llm_request, stream):
            yield response


root_agent = Agent(name="relay", model=RelayLlm(respond=respond), tools=[FunctionTool(note)])
