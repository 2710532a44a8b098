"""Echoes each message and counts turns; `save <text>` saves an artifact; `fail` raises."""

from google.genai import types

from cairn import BaseAgent, Context, Event


class Echo(BaseAgent):
    async def _run_async_impl(self, ctx):  # type: ignore[no-untyped-def, override]
        step = Context(ctx)
        text = ctx.user_content.parts[0].text or ""
        if text == "fail":
            raise RuntimeError("the echo agent was told to fail")
        if text.startswith("save "):
            await step.save_artifact("note.txt", types.Part(text=text.removeprefix("save ")))
        step.state["turns"] = step.state.get("turns", 0) + 1
        step.state["temp:last_text"] = text  # scratch: never stored, never sent to clients
        yield Event(
            message=types.Content(role="model", parts=[types.Part(text=f"echo: {text}")]),
            actions=step.actions,
        )


root_agent = Echo(name="echo")
