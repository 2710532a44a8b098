"""A chat agent for the web UI's tests: streams its replies slowly, asks before paying."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from cairn import Agent, FunctionTool, ToolContext
from cairn.models.llm_request import LlmRequest
from cairn.models.llm_response import LlmResponse
from cairn.testing import Call, ScriptedLlm, Stream


class SlowScriptedLlm(ScriptedLlm):
    """A ScriptedLlm whose streamed chunks arrive a little apart, as a provider's do."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        async for response in super().generate_content_async(llm_request, stream):
            yield response
            if response.partial:
                await asyncio.sleep(0.25)


def reply(request: LlmRequest) -> Stream | Call | str:
    last = request.contents[-1].parts[-1]
    if last.function_response is not None:
        return f"Done: {last.function_response.response}."
    text = last.text or ""
    if text.startswith("pay"):
        return Call("pay", amount=40, to="Ann")
    return Stream(chunks=["Hello", " there,", " you said:", f" {text}."])


def pay(amount: int, to: str, tool_context: ToolContext) -> dict[str, int]:
    """Pay someone."""
    tool_context.state["user:paid_total"] = tool_context.state.get("user:paid_total", 0) + amount
    return {"paid": amount}


root_agent = Agent(
    name="assistant",
    model=SlowScriptedLlm(respond=reply),
    instruction="Be brief.",
    tools=[FunctionTool(pay, require_confirmation=True)],
    output_key="last_reply",
)
