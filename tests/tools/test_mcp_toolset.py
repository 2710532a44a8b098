"""McpToolset against a real MCP server (tests/tools/mcp_servers/calculator.py), on localhost."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, TextIO

import pytest
from google.genai import types

from cairn import Agent, Event, InMemoryRunner
from cairn.testing import Call, ScriptedLlm
from cairn.tools import (
    BaseTool,
    McpTool,
    McpToolset,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from cairn.tools import mcp_sessions as mcp_sessions_module
from cairn.tools.mcp_tool import SseConnectionParams
from cairn.tools.mcp_tool.mcp_session_manager import (
    CheckableMcpHttpClientFactory,
    SseServerParams,
    create_mcp_http_client,
)

mcp = pytest.importorskip("mcp")

SERVER = Path(__file__).resolve().parent / "mcp_servers" / "calculator.py"
ROOT = Path(__file__).resolve().parents[2]
APP, USER, SESSION = "demo", "u1", "s1"


def calculator(**kwargs: Any) -> Any:
    return mcp.StdioServerParameters(command=sys.executable, args=[str(SERVER)], **kwargs)


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[TextIO]:
    with (tmp_path / "server.log").open("w") as log:
        yield log


@pytest.fixture
async def toolset(errlog: TextIO) -> AsyncIterator[McpToolset]:
    toolset = McpToolset(calculator(), errlog=errlog)
    yield toolset
    await toolset.close()


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def turn(runner: InMemoryRunner, text: str) -> list[Event]:
    return [
        e async for e in runner.run_async(user_id=USER, session_id=SESSION, new_message=said(text))
    ]


def process_ended(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


async def call(tool: BaseTool, **args: Any) -> Any:
    return await tool.run_async(args=args, tool_context=None)


def result_of(answer: dict[str, Any]) -> Any:
    """The value a calculator tool returned, from the result the model gets (ADK's shape)."""
    assert answer["isError"] is False
    return answer["structuredContent"]["result"]


def answered(value: Any) -> dict[str, Any]:
    """What the model gets for a calculator tool that returned ``value``, as in ADK."""
    text = value if isinstance(value, str) else str(value)
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"result": value},
        "isError": False,
    }


async def test_tools_are_listed_with_their_schemas(toolset: McpToolset) -> None:
    tools = await toolset.get_tools()
    # Declared by name, as ADK declares them (the server lists add, shout, nap, pid, count...).
    assert [t.name for t in tools] == ["add", "count", "crash", "nap", "pid", "shout"]
    assert all(isinstance(t, McpTool) for t in tools)
    add = tools[0].declaration()
    assert add is not None
    assert add.name == "add" and add.description == "Add two integers."
    schema = add.parameters_json_schema
    assert schema["type"] == "object" and schema["required"] == ["a", "b"]
    assert {k: v["type"] for k, v in schema["properties"].items()} == {
        "a": "integer",
        "b": "integer",
    }
    # The server's output schema is the declaration's response schema, as in ADK.
    assert add.response_json_schema is not None
    assert add.response_json_schema["properties"]["result"]["type"] == "integer"
    # Listed once: later calls reuse the tools of the open session.
    assert (await toolset.get_tools())[0] is tools[0]


async def test_tool_filter_by_names_or_predicate(errlog: TextIO) -> None:
    by_name = McpToolset(calculator(), tool_filter=["shout", "add", "absent"], errlog=errlog)
    by_predicate = McpToolset(
        calculator(), tool_filter=lambda tool, ctx: tool.name.startswith("n"), errlog=errlog
    )
    try:
        assert [t.name for t in await by_name.get_tools()] == ["add", "shout"]
        assert [t.name for t in await by_predicate.get_tools()] == ["nap"]
    finally:
        await by_name.close()
        await by_predicate.close()


async def test_an_llm_agent_calls_mcp_tools_end_to_end(errlog: TextIO) -> None:
    toolset = McpToolset(calculator(), tool_filter=["add", "shout"], errlog=errlog)
    llm = ScriptedLlm(
        script=[
            [Call("add", a=2, b=3), Call("shout", text="hey"), Call("shout", text="")],
            "2 + 3 = 5, HEY!",
        ]
    )
    runner = InMemoryRunner(agent=Agent(name="calc", model=llm, tools=[toolset]), app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    try:
        events = await turn(runner, "add 2 and 3, and shout hey")
    finally:
        await toolset.close()

    call_event, response_event, answer = events
    assert [c.name for c in call_event.get_function_calls()] == ["add", "shout", "shout"]
    added, shouted, failed = (r.response for r in response_event.get_function_responses())
    assert added == answered(5)
    assert shouted == answered("HEY!")
    assert failed is not None and failed["isError"] is True
    assert "nothing to shout" in failed["content"][0]["text"]
    assert answer.content is not None and answer.content.parts is not None
    assert answer.content.parts[0].text == "2 + 3 = 5, HEY!"
    # The model was offered the filtered MCP tools and got their results back.
    first, second = llm.requests
    assert [d.name for d in first.function_declarations] == ["add", "shout"]
    sent = second.contents[-1].parts
    assert sent is not None and sent[0].function_response is not None
    assert sent[0].function_response.response == answered(5)


async def test_an_mcp_tool_error_is_an_error_result(toolset: McpToolset) -> None:
    shout = next(t for t in await toolset.get_tools() if t.name == "shout")
    result = await call(shout, text="")
    assert result["isError"] is True and "structuredContent" not in result
    [part] = result["content"]
    assert part["type"] == "text" and "there is nothing to shout" in part["text"]
    wrong = await call(shout, txt="typo")  # the server rejects arguments off its schema
    assert wrong["isError"] is True and "text" in wrong["content"][0]["text"]


async def test_close_stops_the_server_and_the_toolset_reconnects(toolset: McpToolset) -> None:
    pid_tool = next(t for t in await toolset.get_tools() if t.name == "pid")
    first_pid = result_of(await call(pid_tool))
    await toolset.close()
    assert process_ended(first_pid)
    await toolset.close()  # closing twice is harmless

    pid_tool = next(t for t in await toolset.get_tools() if t.name == "pid")
    second_pid = result_of(await call(pid_tool))
    assert second_pid != first_pid


async def test_opened_in_one_task_closed_in_another(toolset: McpToolset) -> None:
    async def open_and_ask() -> int:
        pid_tool = next(t for t in await toolset.get_tools() if t.name == "pid")
        return int(result_of(await call(pid_tool)))

    pid = await asyncio.create_task(open_and_ask())
    add = (await toolset.get_tools())[0]
    both = await asyncio.gather(call(add, a=1, b=1), call(add, a=2, b=2))
    assert [result_of(answer) for answer in both] == [2, 4]
    await toolset.close()
    assert process_ended(pid)


async def test_a_slow_call_times_out_and_the_session_survives(errlog: TextIO) -> None:
    toolset = McpToolset(StdioConnectionParams(calculator(), timeout=0.5), errlog=errlog)
    try:
        tools = {t.name: t for t in await toolset.get_tools()}
        with pytest.raises(TimeoutError, match="did not answer the call of tool 'nap'"):
            await call(tools["nap"], seconds=5)
        assert result_of(await call(tools["add"], a=20, b=22)) == 42
    finally:
        await toolset.close()


async def test_a_crashed_server_is_restarted_on_the_next_call(toolset: McpToolset) -> None:
    tools = {t.name: t for t in await toolset.get_tools()}
    first_pid = result_of(await call(tools["pid"]))
    with pytest.raises(Exception):  # noqa: B017 - whichever error mcp gives a dead connection
        await call(tools["crash"])
    assert process_ended(first_pid)
    tools = {t.name: t for t in await toolset.get_tools()}
    assert result_of(await call(tools["pid"])) != first_pid
    assert result_of(await call(tools["add"], a=1, b=2)) == 3


async def test_a_server_that_does_not_start_is_a_clear_error(
    errlog: TextIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    dies = McpToolset(
        mcp.StdioServerParameters(command=sys.executable, args=["-c", "raise SystemExit(1)"]),
        errlog=errlog,
    )
    with pytest.raises(ConnectionError, match="could not connect to the MCP server"):
        await dies.get_tools()
    await dies.close()

    monkeypatch.setattr(mcp_sessions_module, "_MIN_STARTUP_TIMEOUT", 1.0)
    silent = McpToolset(
        StdioConnectionParams(
            mcp.StdioServerParameters(
                command=sys.executable, args=["-c", "import time; time.sleep(60)"]
            ),
            timeout=0.2,
        ),
        errlog=errlog,
    )
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="did not start"):
        await silent.get_tools()
    assert time.monotonic() - started < 15
    await silent.close()


def test_sync_runs_each_on_its_own_loop_reuse_the_toolset(errlog: TextIO) -> None:
    # Runner.run drives each invocation on a new event loop: the session of the first
    # loop ends with it (its server stops) and the second run opens a new one.
    toolset = McpToolset(calculator(), tool_filter=["add", "pid"], errlog=errlog)
    llm = ScriptedLlm(
        script=[[Call("pid"), Call("add", a=1, b=2)], "3", Call("add", a=3, b=4), "7"]
    )
    runner = InMemoryRunner(agent=Agent(name="calc", model=llm, tools=[toolset]), app_name=APP)
    asyncio.run(
        runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    )
    first = list(runner.run(user_id=USER, session_id=SESSION, new_message=said("1+2")))
    pid, added = (r.response for r in first[1].get_function_responses())
    assert added == answered(3) and pid is not None
    assert process_ended(result_of(pid))
    second = list(runner.run(user_id=USER, session_id=SESSION, new_message=said("3+4")))
    assert second[1].get_function_responses()[0].response == answered(7)
    asyncio.run(toolset.close())


def test_without_the_mcp_package_cairn_imports_and_the_error_says_what_to_install() -> None:
    script = (
        "import sys\n"
        "sys.modules['mcp'] = None\n"
        "import cairn, cairn.tools\n"
        "from cairn.tools import McpToolset, StreamableHTTPConnectionParams\n"
        "try:\n"
        "    McpToolset(StreamableHTTPConnectionParams(url='http://127.0.0.1:1/mcp'))\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert "pip install 'cairn[mcp]'" in result.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(tmp_path: Path, transport: str) -> Iterator[int]:
    """Run the calculator server over ``transport`` ("http" or "sse") on a free port."""
    port = free_port()
    log_path = tmp_path / f"{transport}-server.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, str(SERVER), transport, str(port)], stdout=log, stderr=log
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                if process.poll() is not None:
                    pytest.fail(f"the MCP {transport} server exited: {log_path.read_text()}")
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        pytest.fail(f"the MCP {transport} server did not listen within 30 s")
                    time.sleep(0.1)
            yield port
        finally:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    for port in serve(tmp_path, "http"):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def sse_server(tmp_path: Path) -> Iterator[str]:
    for port in serve(tmp_path, "sse"):
        yield f"http://127.0.0.1:{port}/sse"


async def test_streamable_http_transport(http_server: str) -> None:
    toolset = McpToolset(
        StreamableHTTPConnectionParams(url=http_server, headers={"X-Test": "1"}),
        tool_filter=["add", "shout"],
    )
    try:
        tools = await toolset.get_tools()
        assert [t.name for t in tools] == ["add", "shout"]
        assert result_of(await call(tools[0], a=40, b=2)) == 42
        assert "nothing to shout" in (await call(tools[1], text=""))["content"][0]["text"]
    finally:
        await toolset.close()
    # A closed toolset connects again when used.
    assert result_of(await call((await toolset.get_tools())[0], a=1, b=1)) == 2
    await toolset.close()


async def test_sse_transport(sse_server: str) -> None:
    made: list[dict[str, str] | None] = []

    def client_factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> Any:
        made.append(headers)
        return create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)

    assert SseServerParams is SseConnectionParams  # ADK's older name
    toolset = McpToolset(
        connection_params=SseConnectionParams(
            url=sse_server, headers={"X-Test": "1"}, httpx_client_factory=client_factory
        ),
        tool_filter=["add", "shout"],
    )
    try:
        tools = await toolset.get_tools()
        assert [t.name for t in tools] == ["add", "shout"]
        assert result_of(await call(tools[0], a=40, b=2)) == 42
        assert "nothing to shout" in (await call(tools[1], text=""))["content"][0]["text"]
        assert await toolset.list_resources() == ["tides", "pixel"]
        [tides] = await toolset.read_resource("tides")
        assert tides.text.startswith("High tide at 06:12")
    finally:
        await toolset.close()
    # The client was made by the given factory, with the connection's headers.
    assert made and all(h is not None and h.get("X-Test") == "1" for h in made)
    assert isinstance(client_factory, CheckableMcpHttpClientFactory)
    # A closed toolset connects again when used.
    assert result_of(await call((await toolset.get_tools())[0], a=1, b=1)) == 2
    await toolset.close()


async def test_sse_server_that_is_not_there_is_a_clear_error() -> None:
    toolset = McpToolset(SseConnectionParams(url=f"http://127.0.0.1:{free_port()}/sse"))
    with pytest.raises(ConnectionError, match="could not connect to the MCP server http://"):
        await toolset.get_tools()
    await toolset.close()


def test_connection_params_of_the_wrong_kind_are_a_clear_error() -> None:
    with pytest.raises(TypeError, match="needs connection_params: StdioServerParameters"):
        McpToolset()
    with pytest.raises(TypeError, match=r"cannot connect with a str; pass .*SseConnectionParams"):
        McpToolset("http://127.0.0.1:1/sse")


async def test_runner_close_closes_the_agents_toolsets(toolset: McpToolset) -> None:
    from cairn import Agent
    from cairn.testing import ScriptedLlm

    pid = result_of(await call(await _tool(toolset, "pid")))
    child = Agent(name="child", model=ScriptedLlm(), tools=[toolset])
    runner = InMemoryRunner(agent=Agent(name="root", model=ScriptedLlm(), sub_agents=[child]))
    await runner.close()
    assert process_ended(int(pid))


async def _tool(toolset: McpToolset, name: str) -> BaseTool:
    return next(t for t in await toolset.get_tools() if t.name == name)


async def test_an_unreachable_server_inside_an_agent_tool_does_not_end_the_run(
    errlog: TextIO,
) -> None:
    from cairn import AgentTool

    down = McpToolset(
        mcp.StdioServerParameters(command=sys.executable, args=["-c", "raise SystemExit(1)"]),
        errlog=errlog,
    )
    helper_llm = ScriptedLlm(script=["I cannot reach the calculator right now."])
    helper = Agent(name="helper", model=helper_llm, tools=[down], description="Computes.")
    root_llm = ScriptedLlm(script=[Call("helper", request="add 2 and 3"), "Sorry, not now."])
    runner = InMemoryRunner(
        agent=Agent(name="root", model=root_llm, tools=[AgentTool(helper)]), app_name=APP
    )
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    try:
        events = await turn(runner, "add 2 and 3")
    finally:
        await down.close()

    # As in ADK, the agent runs without the toolset's tools; cairn also tells its model why.
    [request] = helper_llm.requests
    assert request.function_declarations == []
    assert "could not be loaded" in request.system_instruction_text
    assert "could not connect to the MCP server" in request.system_instruction_text
    result = next(r for e in events for r in e.get_function_responses() if r.name == "helper")
    assert result.response == {"result": "I cannot reach the calculator right now."}
    assert events[-1].author == "root" and events[-1].is_final_response()
