"""An agent that, told "stall", creates the file named by $STALL_INSIDE and then waits until
its process is killed; any other message it answers with "ok"."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator
from pathlib import Path

from google.genai import types

from cairn import BaseAgent, Event, InvocationContext


class Stall(BaseAgent):
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        content = ctx.user_content
        text = content.parts[0].text if content is not None and content.parts else ""
        if text == "stall":
            Path(os.environ["STALL_INSIDE"]).write_text(str(os.getpid()))
            await asyncio.Event().wait()
        yield Event(content=types.ModelContent("ok"))


root_agent = Stall(name="stall")
