"""`remember` adds this session to the user's memory; `recall <words>` searches it."""

from google.genai import types

from cairn import BaseAgent, Event


class Memo(BaseAgent):
    async def _run_async_impl(self, ctx):  # type: ignore[no-untyped-def, override]
        text = ctx.user_content.parts[0].text or ""
        if text.startswith("recall "):
            found = await ctx.memory_service.search_memory(
                app_name=ctx.session.app_name,
                user_id=ctx.session.user_id,
                query=text.removeprefix("recall "),
            )
            said = [p.text for m in found.memories for p in m.content.parts or [] if p.text]
            reply = " | ".join(said) or "nothing"
        else:
            await ctx.memory_service.add_session_to_memory(ctx.session)
            reply = "noted"
        yield Event(message=types.Content(role="model", parts=[types.Part(text=reply)]))


root_agent = Memo(name="memo")
