"""What lives at ADK's addresses works as an ADK app uses it (beyond being importable)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from google.genai import types

from cairn.agents import LlmAgent, ReadonlyContext
from cairn.agents.callback_context import CallbackContext
from cairn.cli.utils import logs
from cairn.runners import InMemoryRunner
from cairn.testing import Call, ScriptedLlm
from cairn.tools import AgentTool, ToolContext, exit_loop
from cairn.tools.tool_context import ToolContext as ToolContextAtItsPath
from cairn.utils.instructions_utils import inject_session_state
from cairn.workflow import LoopAgent


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run(agent: LlmAgent | LoopAgent, text: str = "go") -> tuple[list, dict]:  # type: ignore[type-arg]
    runner = InMemoryRunner(agent=agent, app_name="app")
    await runner.session_service.create_session(
        app_name="app", user_id="u", session_id="s", state={"topic": "tides"}
    )
    events = [
        e async for e in runner.run_async(user_id="u", session_id="s", new_message=said(text))
    ]
    session = await runner.session_service.get_session(app_name="app", user_id="u", session_id="s")
    assert session is not None
    return events, session.state


def test_the_context_classes_are_one_class_at_every_address() -> None:
    assert ToolContext is ToolContextAtItsPath is CallbackContext
    assert AgentTool.__name__ == "AgentTool"


async def test_exit_loop_ends_a_loop_agent() -> None:
    worker = LlmAgent(
        name="worker",
        model=ScriptedLlm(script=["round one", Call("exit_loop"), "never said"]),
        tools=[exit_loop],
    )
    events, _ = await run(LoopAgent(name="loop", sub_agents=[worker], max_iterations=5))
    calls = [
        p.function_call.name
        for e in events
        if e.content
        for p in e.content.parts or []
        if p.function_call
    ]
    assert calls == ["exit_loop"]
    assert not any(
        e.content and e.content.parts and e.content.parts[0].text == "never said" for e in events
    )
    assert any(e.actions.escalate for e in events)


async def test_an_instruction_provider_reads_state_through_a_read_only_context() -> None:
    seen: list[str] = []

    async def instruction(context: ReadonlyContext) -> str:
        with pytest.raises(TypeError):
            context.state["topic"] = "changed"  # type: ignore[index]
        seen.append(await inject_session_state("Talk about {topic}.", context))
        return seen[-1]

    readonly = LlmAgent(name="guide", model=ScriptedLlm(script=["ok"]), instruction=instruction)
    _, state = await run(readonly)
    assert seen == ["Talk about tides."]
    assert state["topic"] == "tides"


def test_log_to_tmp_folder_sends_logging_to_a_new_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    root = logging.getLogger()
    before = (root.level, list(root.handlers))
    try:
        path = logs.log_to_tmp_folder(logging.INFO, log_file_prefix="demo")
        logging.getLogger("cairn.test").info("hello from the app")
        for handler in root.handlers:
            handler.flush()
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
            handler.close()
        root.setLevel(before[0])
        for handler in before[1]:
            root.addHandler(handler)
    assert Path(path).parent == tmp_path / "agents_log"
    assert "hello from the app" in Path(path).read_text()
    assert (tmp_path / "agents_log" / "demo.latest.log").resolve() == Path(path).resolve()
    assert path in capsys.readouterr().out
