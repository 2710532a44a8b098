"""A model agent whose model call waits until the file the message names exists: a run that
is surely in its first model call (nothing yielded yet) while a test acts on it."""

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path

from cairn import Agent
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.testing import ScriptedLlm


class PonderingLlm(ScriptedLlm):
    """Answers "pondered" once the flag file (the last user text) exists."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        flag = Path(llm_request.contents[-1].parts[-1].text or "")  # type: ignore[index]
        while not flag.exists():
            await asyncio.sleep(0.05)
        async for response in super().generate_content_async(llm_request, stream):
            yield response


root_agent = Agent(name="ponder", model=PonderingLlm(respond=lambda request: "pondered"))
