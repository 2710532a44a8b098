"""Small agents the runs tests execute: one that echoes, one that asks and waits for an
answer, one that fails, one that holds until released."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from google.genai import types

from cairn import BaseAgent, Context, Event, InvocationContext


def text(value: str, role: str = "user") -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=value)])


def said(ctx: InvocationContext) -> str:
    content = ctx.user_content
    return content.parts[0].text or "" if content and content.parts else ""


class Echo(BaseAgent):
    """Replies ``echo: <message>``; counts its runs in state ``turns``."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        step = Context(ctx)
        step.state["turns"] = step.state.get("turns", 0) + 1
        yield Event(content=text(f"echo: {said(ctx)}", "model"), actions=step.actions)


ASK_ID = "call-ask"


class Asker(BaseAgent):
    """Asks for an answer (a long-running call ``ask``), then replies with it."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        answers = [
            r.response
            for e in ctx.session.events
            if e.invocation_id == ctx.invocation_id
            for r in e.get_function_responses()
            if r.id == ASK_ID
        ]
        if answers:
            yield Event(content=text(f"answered: {answers[-1]}", "model"))
            return
        call = types.Part(function_call=types.FunctionCall(id=ASK_ID, name="ask", args={}))
        yield Event(
            content=types.Content(role="model", parts=[call]), long_running_tool_ids={ASK_ID}
        )


class Broken(BaseAgent):
    """Fails with an error that is not cairn's (its text must not reach a client)."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        raise RuntimeError("secret internals")
        yield  # pragma: no cover


class Holding(BaseAgent):
    """Replies ``started``, then holds until ``release`` is set, then replies ``finished``."""

    release: asyncio.Event
    started: asyncio.Event

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(content=text("started", "model"))
        self.started.set()
        await self.release.wait()
        yield Event(content=text("finished", "model"))
