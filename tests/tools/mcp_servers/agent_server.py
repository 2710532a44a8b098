"""A cairn agent served over MCP stdio with ``to_mcp_server``: ``python agent_server.py``.

Its model repeats every user message of the conversation so far, so a client can see
that calls on one connection are one conversation.
"""

from __future__ import annotations

from cairn import Agent
from cairn.models.llm_request import LlmRequest
from cairn.testing import ScriptedLlm
from cairn.tools.mcp_tool import to_mcp_server


def heard(request: LlmRequest) -> str:
    said = [
        part.text
        for content in request.contents
        if content.role == "user"
        for part in content.parts or []
        if part.text
    ]
    return "heard: " + " | ".join(said)


agent = Agent(
    name="echo",
    description="Repeats what it was told.",
    model=ScriptedLlm(respond=heard),
)

if __name__ == "__main__":
    to_mcp_server(agent, instructions="Ask the echo agent.").run("stdio")
