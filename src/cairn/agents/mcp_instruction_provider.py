"""An agent's instruction fetched from an MCP server's prompt (ADK's ``McpInstructionProvider``)."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from cairn.agents.readonly_context import ReadonlyContext
from cairn.tools.mcp_sessions import ConnectionParams, MCPSessionManager, list_all_pages


class McpInstructionProvider:
    """``LlmAgent(instruction=McpInstructionProvider(params, "prompt name"))``.

    Before each model call the named prompt is fetched (``prompts/get``); its
    arguments are filled from the session's state by name (a string as it is,
    another value as JSON), and the text of its messages, joined, is the
    instruction. The session to the server is kept between calls; each request
    is bounded by the connection's timeout. A prompt the server does not have, or
    one with no text, is a ``ValueError`` naming it; ``close()`` ends the session.
    """

    def __init__(
        self, connection_params: ConnectionParams, prompt_name: str, errlog: TextIO = sys.stderr
    ) -> None:
        if not isinstance(prompt_name, str) or not prompt_name:
            raise ValueError(
                f"McpInstructionProvider needs the name of an MCP prompt, got {prompt_name!r}"
            )
        self.prompt_name = prompt_name
        self._sessions = MCPSessionManager(connection_params, errlog)

    async def __call__(self, context: ReadonlyContext) -> str:
        sessions = self._sessions
        prompts = await sessions.request(
            "the prompts listing",
            lambda session: list_all_pages(session, "list_prompts", "prompts"),
            retry=True,
        )
        prompt = next((p for p in prompts if p.name == self.prompt_name), None)
        if prompt is None:
            known = ", ".join(repr(str(p.name)) for p in prompts) or "none"
            raise ValueError(
                f"the MCP server {sessions.description} has no prompt named "
                f"{self.prompt_name!r} (it has: {known}); fix McpInstructionProvider's "
                "prompt_name"
            )
        wanted = {argument.name for argument in prompt.arguments or []}
        state = context.state
        arguments = {name: _as_argument(state[name]) for name in wanted if name in state}
        result = await sessions.request(
            f"the prompt {self.prompt_name!r}",
            lambda session: session.get_prompt(self.prompt_name, arguments=arguments),
            retry=True,
        )
        texts = [
            str(message.content.text)
            for message in result.messages or []
            if getattr(message.content, "type", None) == "text"
        ]
        if not texts:
            raise ValueError(
                f"the MCP prompt {self.prompt_name!r} of {sessions.description} has no text "
                "to use as an instruction"
            )
        return "".join(texts)

    async def close(self) -> None:
        """End the session to the server (a stdio server stops)."""
        await self._sessions.close()


def _as_argument(value: Any) -> str:
    """A state value as a prompt argument: MCP's prompt arguments are strings."""
    return value if isinstance(value, str) else json.dumps(value, default=str)


__all__ = ["McpInstructionProvider"]
