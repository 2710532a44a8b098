"""Apps of the plugin tests, the same in this process and in a worker process.

Every hook a ``Recorder`` plugin sees, and every run of a tool, is appended as a line to
the file named by ``CAIRN_PLUGIN_LOG`` (so counts add up across processes). Models reply
from what they are shown (``ScriptedLlm(respond=...)``), so each process acts alike.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from google.genai import types

from cairn import Agent, App
from cairn.agents.context import Context
from cairn.models.llm_request import LlmRequest
from cairn.plugins import (
    BasePlugin,
    ContextFilterPlugin,
    DebugLoggingPlugin,
    GlobalInstructionPlugin,
    LoggingPlugin,
    MultimodalToolResultsPlugin,
    ReflectAndRetryToolPlugin,
    SaveFilesAsArtifactsPlugin,
    ToolCallIntegrityPlugin,
)
from cairn.testing import Call, ScriptedLlm
from cairn.tools import FunctionTool
from cairn.tools.base_tool import BaseTool

APP = "plugins_app"


def note(line: str) -> None:
    """Append ``line`` to the run log (one line per hook call or tool run)."""
    with open(os.environ["CAIRN_PLUGIN_LOG"], "a", encoding="utf-8") as log:
        log.write(line + "\n")


def noted(path: str | Path) -> list[str]:
    file = Path(path)
    return file.read_text().splitlines() if file.exists() else []


class Recorder(BasePlugin):
    """Notes each hook it sees; replaces ``lookup``'s result (a cached answer) and writes
    state through its contexts."""

    def __init__(self) -> None:
        super().__init__(name="recorder")

    async def before_run_callback(self, *, invocation_context: Any) -> None:
        note("before_run")

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        note("after_run")

    async def before_agent_callback(self, *, agent: Any, callback_context: Context) -> None:
        note(f"before_agent {agent.name}")
        callback_context.state["agent_started"] = callback_context.state.get("agent_started", 0) + 1

    async def after_agent_callback(self, *, agent: Any, callback_context: Context) -> None:
        note(f"after_agent {agent.name}")

    async def before_model_callback(
        self, *, callback_context: Context, llm_request: LlmRequest
    ) -> None:
        note("before_model")

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context
    ) -> dict[str, Any] | None:
        note(f"before_tool {tool.name}")
        if tool.name == "lookup":
            tool_context.state["lookups_served"] = 1
            return {"cached": f"answer to {tool_args['q']}"}
        return None

    async def after_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: Context, result: Any
    ) -> None:
        note(f"after_tool {tool.name}")


def lookup(q: str) -> dict[str, str]:
    """Look something up."""
    note("tool lookup")
    return {"fresh": q}


def pay(amount: int) -> dict[str, str]:
    """Pay an amount."""
    note("tool pay")
    return {"paid": str(amount)}


def flaky(n: int) -> dict[str, str]:
    """A tool that always fails."""
    note("tool flaky")
    raise ConnectionError("the backend is down")


def _answered(request: LlmRequest) -> dict[str, list[dict[str, Any]]]:
    """The function responses the model is shown, by function name."""
    found: dict[str, list[dict[str, Any]]] = {}
    for content in request.contents:
        for part in content.parts or []:
            if part.function_response is not None:
                name = part.function_response.name or ""
                found.setdefault(name, []).append(dict(part.function_response.response or {}))
    return found


def _confirm_model(request: LlmRequest) -> Any:
    answered = _answered(request)
    if "pay" not in answered:
        return [Call("lookup", q="weather"), Call("pay", amount=5)]
    return "done"


def _retry_model(request: LlmRequest) -> Any:
    answered = _answered(request)
    if "approve" not in answered:
        return [Call("flaky", n=1), Call("approve")]
    if len(answered.get("flaky", [])) < 2:
        return Call("flaky", n=2)
    return "gave up"


def approve() -> dict[str, str]:
    """Something a human approves."""
    note("tool approve")
    return {"approved": "yes"}


def _composed_model(request: LlmRequest) -> Any:
    answered = _answered(request)
    if "pay" not in answered:
        return [Call("lookup", q="fees"), Call("flaky", n=1), Call("pay", amount=7)]
    if len(answered.get("flaky", [])) < 2:
        return Call("flaky", n=2)
    return "paid, with a fee"


def composed() -> App:
    """Every shipped plugin that needs no service, with the recorder, around one agent whose
    turn is answered by a plugin, fails, and waits for a confirmation."""
    agent = Agent(
        name="clerk",
        model=ScriptedLlm(respond=_composed_model),
        instruction="Handle payments.",
        tools=[lookup, flaky, FunctionTool(pay, require_confirmation=True)],
    )
    plugins: list[BasePlugin] = [
        ToolCallIntegrityPlugin(secret_key=b"test key, not a secret"),
        Recorder(),
        LoggingPlugin(),
        DebugLoggingPlugin(output_path=os.environ["CAIRN_PLUGIN_LOG"] + ".yaml"),
        GlobalInstructionPlugin("You work for {org?}."),
        ReflectAndRetryToolPlugin(max_retries=3),
        ContextFilterPlugin(num_invocations_to_keep=5),
        MultimodalToolResultsPlugin(),
        SaveFilesAsArtifactsPlugin(),
    ]
    return App(name=APP, root_agent=agent, plugins=plugins)


def build(name: str) -> App:
    """The app called ``name``: ``confirm`` (a plugin answers one call of a turn, the other
    waits for a confirmation) or ``retry`` (a failing call beside one that waits)."""
    if name == "confirm":
        agent = Agent(
            name="clerk",
            model=ScriptedLlm(respond=_confirm_model),
            tools=[lookup, FunctionTool(pay, require_confirmation=True)],
        )
        return App(name=APP, root_agent=agent, plugins=[Recorder()])
    if name == "retry":
        agent = Agent(
            name="clerk",
            model=ScriptedLlm(respond=_retry_model),
            tools=[flaky, FunctionTool(approve, require_confirmation=True)],
        )
        return App(name=APP, root_agent=agent, plugins=[ReflectAndRetryToolPlugin(max_retries=3)])
    if name == "composed":
        return composed()
    raise ValueError(f"no plugin test app named {name!r}")


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])
