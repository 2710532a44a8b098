"""The web timeline bench's agent: each turn, a call, its result and three replies, 50 ms
apart, so that each event reaches the page on its own."""

import asyncio

from google.genai import types

from cairn import BaseAgent, Context, Event

GAP_SECONDS = 0.05


class Ticker(BaseAgent):
    async def _run_async_impl(self, ctx):  # type: ignore[no-untyped-def, override]
        step = Context(ctx)
        text = ctx.user_content.parts[0].text or ""
        call = types.FunctionCall(id=f"call-{text}", name="lookup", args={"topic": text})
        result = types.FunctionResponse(id=call.id, name="lookup", response={"facts": text})
        contents = [
            types.Content(role="model", parts=[types.Part(function_call=call)]),
            types.Content(role="user", parts=[types.Part(function_response=result)]),
        ]
        contents += [
            types.Content(role="model", parts=[types.Part(text=f"part {n} of the answer: {text}")])
            for n in (1, 2, 3)
        ]
        for content in contents[:-1]:
            await asyncio.sleep(GAP_SECONDS)
            yield Event(message=content)
        await asyncio.sleep(GAP_SECONDS)
        step.state["turns"] = step.state.get("turns", 0) + 1
        yield Event(message=contents[-1], actions=step.actions)


root_agent = Ticker(name="ticker")
