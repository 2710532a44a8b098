"""An MCP server's resources (load_mcp_resource), prompts (McpInstructionProvider) and
progress, against the real calculator server (tests/tools/mcp_servers/calculator.py)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, TextIO

import pytest
from google.genai import types

from cairn import Agent, Event, InMemoryRunner
from cairn.agents import McpInstructionProvider
from cairn.agents.mcp_instruction_provider import McpInstructionProvider as AtItsPath
from cairn.testing import Call, ScriptedLlm
from cairn.tools import McpToolset, StdioConnectionParams
from cairn.tools.load_mcp_resource_tool import LoadMcpResourceTool
from cairn.tools.mcp_tool.mcp_session_manager import MCPSessionManager, retry_on_errors
from cairn.tools.mcp_tool.mcp_tool import ProgressCallbackFactory

mcp = pytest.importorskip("mcp")

SERVER = Path(__file__).resolve().parent / "mcp_servers" / "calculator.py"
APP, USER, SESSION = "demo", "u1", "s1"
TIDES = "High tide at 06:12, low tide at 12:30."


def calculator() -> Any:
    return mcp.StdioServerParameters(command=sys.executable, args=[str(SERVER)])


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[TextIO]:
    with (tmp_path / "server.log").open("w") as log:
        yield log


@pytest.fixture
async def toolset(errlog: TextIO) -> AsyncIterator[McpToolset]:
    toolset = McpToolset(connection_params=calculator(), use_mcp_resources=True, errlog=errlog)
    yield toolset
    await toolset.close()


async def run(agent: Agent, text: str, state: dict[str, Any] | None = None) -> list[Event]:
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(
        app_name=APP, user_id=USER, session_id=SESSION, state=state
    )
    message = types.Content(role="user", parts=[types.Part(text=text)])
    try:
        return [
            e async for e in runner.run_async(user_id=USER, session_id=SESSION, new_message=message)
        ]
    finally:
        await runner.close()


async def test_resources_are_listed_described_and_read(toolset: McpToolset) -> None:
    assert await toolset.list_resources() == ["tides", "pixel"]
    info = await toolset.get_resource_info("tides")
    assert info["uri"] == "notes://tides" and info["mimeType"] == "text/plain"
    assert info["description"] == "Tide times."
    [text] = await toolset.read_resource("tides")
    assert text.text == TIDES
    [image] = await toolset.read_resource("pixel")
    assert image.blob and image.blob.startswith("iVBORw0KGgo")  # a base64 PNG
    with pytest.raises(ValueError, match=r"no resource named 'moon' \(it has: 'tides', 'pixel'\)"):
        await toolset.read_resource("moon")


async def test_load_mcp_resource_shows_the_resources_the_model_asks_for(
    toolset: McpToolset,
) -> None:
    tools = await toolset.get_tools()
    assert isinstance(tools[-1], LoadMcpResourceTool) and tools[-1].name == "load_mcp_resource"
    llm = ScriptedLlm(
        script=[Call("load_mcp_resource", resource_names=["tides", "pixel", "moon"]), "06:12."]
    )
    events = await run(Agent(name="guide", model=llm, tools=[toolset]), "When is high tide?")

    first, second = llm.requests
    declared = [d.name for d in first.function_declarations]
    assert "load_mcp_resource" in declared and "add" in declared
    assert '["tides", "pixel"]' in first.system_instruction_text
    # The next request shows each asked-for resource after the function response.
    shown = second.contents[-2:]
    assert [c.role for c in shown] == ["user", "user"]
    assert [p.text for p in shown[0].parts or []] == ["Resource tides is:", TIDES]
    heading, image = shown[1].parts or []
    assert heading.text == "Resource pixel is:"
    assert image.inline_data is not None and image.inline_data.mime_type == "image/png"
    assert image.inline_data.data is not None and image.inline_data.data.startswith(b"\x89PNG")
    # A resource the server does not have is named to the model, with the reason.
    assert "The MCP resource 'moon' could not be read" in second.system_instruction_text
    # The log keeps the names the model asked for, never the contents.
    [response] = events[1].get_function_responses()
    assert response.response is not None
    assert response.response["resource_names"] == ["tides", "pixel", "moon"]
    assert all(TIDES not in e.model_dump_json() for e in events)
    assert events[-1].content is not None and events[-1].content.parts is not None
    assert events[-1].content.parts[0].text == "06:12."


async def test_without_use_mcp_resources_there_is_no_load_tool(errlog: TextIO) -> None:
    toolset = McpToolset(calculator(), errlog=errlog)
    try:
        assert "load_mcp_resource" not in [t.name for t in await toolset.get_tools()]
    finally:
        await toolset.close()


async def test_an_mcp_prompt_is_the_agents_instruction(errlog: TextIO) -> None:
    assert AtItsPath is McpInstructionProvider
    llm = ScriptedLlm(script=["Ahoy."])
    provider = McpInstructionProvider(calculator(), prompt_name="persona", errlog=errlog)
    agent = Agent(name="guide", model=llm, instruction=provider)
    await run(agent, "hi", state={"topic": "tides", "tone": {"mood": "warm"}, "other": 1})
    [request] = llm.requests
    # Arguments come from the state by name (a non-string value as JSON).
    assert request.system_instruction_text == (
        'You are a guide to tides. Answer in a {"mood": "warm"} tone.'
    )


async def test_an_unknown_prompt_is_a_clear_error(errlog: TextIO) -> None:
    provider = McpInstructionProvider(calculator(), prompt_name="pirate", errlog=errlog)
    agent = Agent(name="guide", model=ScriptedLlm(script=["never"]), instruction=provider)
    try:
        with pytest.raises(ValueError, match=r"no prompt named 'pirate' \(it has: 'persona'\)"):
            await run(agent, "hi")
    finally:
        await provider.close()
    with pytest.raises(ValueError, match="needs the name of an MCP prompt"):
        McpInstructionProvider(calculator(), prompt_name="")


async def test_progress_reaches_the_callback_and_a_factory_gets_the_calls_context(
    errlog: TextIO,
) -> None:
    heard: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))

    made_for: list[tuple[str, Any]] = []

    def factory(tool_name: str, *, callback_context: Any = None, **kwargs: Any) -> Any:
        made_for.append((tool_name, callback_context))
        return on_progress

    assert isinstance(factory, ProgressCallbackFactory)
    toolset = McpToolset(
        calculator(), tool_filter=["count"], progress_callback=factory, errlog=errlog
    )
    llm = ScriptedLlm(script=[Call("count", to=3), "counted"])
    events = await run(Agent(name="counter", model=llm, tools=[toolset]), "count to 3")
    assert heard == [(1.0, 3.0, "at 1"), (2.0, 3.0, "at 2"), (3.0, 3.0, "at 3")]
    [(name, context)] = made_for
    assert name == "count" and context.function_call_id == events[0].get_function_calls()[0].id

    heard.clear()
    direct = McpToolset(calculator(), progress_callback=on_progress, errlog=errlog)
    try:
        count = next(t for t in await direct.get_tools() if t.name == "count")
        await count.run_async(args={"to": 2}, tool_context=None)
    finally:
        await direct.close()
    assert [progress for progress, _, _ in heard] == [1.0, 2.0]


async def test_a_session_manager_hands_out_one_session_and_bounds_requests(
    errlog: TextIO,
) -> None:
    manager = MCPSessionManager(StdioConnectionParams(calculator(), timeout=0.5), errlog)
    try:
        session = await manager.create_session()
        assert await manager.create_session() is session
        prompts = await manager.request("the prompts listing", lambda s: s.list_prompts())
        assert [p.name for p in prompts.prompts] == ["persona"]
        with pytest.raises(TimeoutError, match=r"did not answer the nap within 0\.5 s"):
            await manager.request("the nap", lambda s: s.call_tool("nap", {"seconds": 30}))
    finally:
        await manager.close()


async def test_retry_on_errors_runs_a_failed_call_once_more() -> None:
    attempts: list[int] = []

    class Flaky:
        @retry_on_errors
        async def fetch(self, value: int) -> int:
            attempts.append(value)
            if len(attempts) == 1:
                raise ConnectionError("the session was gone")
            return value

        @retry_on_errors
        async def broken(self) -> int:
            attempts.append(-1)
            raise ConnectionError("still gone")

    assert await Flaky().fetch(7) == 7 and attempts == [7, 7]
    attempts.clear()
    with pytest.raises(ConnectionError, match="still gone"):
        await Flaky().broken()
    assert attempts == [-1, -1]  # once more, not forever
