"""Fails the server's way: `leak` raises with a secret in its message; `save-as NAME` saves
an artifact named NAME (an over-long name fails inside the file artifact store)."""

from google.genai import types

from cairn import BaseAgent, Context, Event

SECRET = "password=hunter2 for /srv/vault/keys.pem"


class Leaky(BaseAgent):
    async def _run_async_impl(self, ctx):  # type: ignore[no-untyped-def, override]
        text = ctx.user_content.parts[0].text or ""
        if text == "leak":
            raise RuntimeError(f"could not unlock the vault with {SECRET}")
        if text.startswith("save-as "):
            await Context(ctx).save_artifact(text.removeprefix("save-as "), types.Part(text="x"))
        yield Event(message=types.Content(role="model", parts=[types.Part(text="done")]))


root_agent = Leaky(name="leaky")
