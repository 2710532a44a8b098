"""Asks for an API key (an ``adk_request_credential`` interrupt) and says what it got."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from google.genai import types

from cairn import BaseAgent, Event, InvocationContext

AUTH_CONFIG = {"authScheme": {"type": "apiKey", "in": "header", "name": "X-Key"}}


class Vault(BaseAgent):
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        answers = {
            r.id: r.response
            for e in ctx.session.events
            if e.invocation_id == ctx.invocation_id
            for r in e.get_function_responses()
        }
        if "ask-key" in answers:
            # The log keeps the answer without its key; the answer as sent is this process's.
            stored = answers["ask-key"] or {}
            assert "apiKey" not in stored["exchangedAuthCredential"]
            config = ctx.credential_answers["ask-key"]
            key = config["exchangedAuthCredential"]["apiKey"]
            text = f"got key {key} for {config['authScheme']['name']}"
            yield Event(content=types.Content(role="model", parts=[types.Part(text=text)]))
            return
        ask = types.FunctionCall(
            id="ask-key",
            name="adk_request_credential",
            args={
                "functionCallId": "call-fetch",
                "authConfig": AUTH_CONFIG,
                "message": "an API key for the weather service",
            },
        )
        yield Event(
            content=types.Content(role="model", parts=[types.Part(function_call=ask)]),
            long_running_tool_ids={"ask-key"},
        )


root_agent = Vault(name="vault")
