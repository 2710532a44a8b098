"""Code execution (`LlmAgent.code_executor`): ADK's flow, with real child processes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from pydantic import ValidationError

from cairn import Agent, Event, InMemoryRunner
from cairn.code_executors import (
    BuiltInCodeExecutor,
    CodeExecutionInput,
    CodeExecutionResult,
    CodeExecutionUtils,
    CodeExecutorContext,
    CodeExecutorError,
    ContainerCodeExecutor,
    ContainerEngineUnavailableError,
    File,
    UnsafeLocalCodeExecutor,
)
from cairn.code_executors.base_code_executor import BaseCodeExecutor
from cairn.models.llm_request import LlmRequest
from cairn.testing import ScriptedLlm
from cairn.workflow import START, Workflow

APP, USER, SESSION = "coder", "u", "s"


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def block(code: str, fence: str = "python") -> str:
    return f"```{fence}\n{code}\n```"


async def run(agent: Any, *texts: str) -> tuple[list[Event], InMemoryRunner]:
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    events: list[Event] = []
    for text in texts:
        async for event in runner.run_async(
            user_id=USER, session_id=SESSION, new_message=said(text)
        ):
            events.append(event)
    return events, runner


def parts(event: Event) -> list[types.Part]:
    return list(event.content.parts or []) if event.content else []


def result_of(event: Event) -> types.CodeExecutionResult:
    result = parts(event)[-1].code_execution_result
    assert result is not None
    return result


# -- the flow --------------------------------------------------------------------------------
async def test_code_in_a_reply_runs_and_the_model_sees_code_and_output() -> None:
    code = "import os\nprint(6 * 7, os.getpid() != 0)"
    reply = f"Let me compute.\n{block(code)}\nnot kept"
    model = ScriptedLlm(script=[reply, "It is 42."])
    agent = Agent(
        name="calc", model=model, code_executor=UnsafeLocalCodeExecutor(), output_key="answer"
    )
    events, runner = await run(agent, "6 times 7?")
    code_event, result_event, answer = events
    prefix, code_part = parts(code_event)
    assert prefix.text == "Let me compute.\n"
    assert code_part.executable_code is not None
    assert code_part.executable_code.code == "import os\nprint(6 * 7, os.getpid() != 0)"
    run_id = code_part.executable_code.id
    assert run_id is not None and run_id.startswith("cairn-code-")
    result = result_of(result_event)
    assert result.outcome == types.Outcome.OUTCOME_OK and result.id == run_id
    assert result.output == "Code execution result:\n42 True\n\n"
    assert not result_event.is_final_response()
    assert answer.is_final_response() and parts(answer)[0].text == "It is 42."
    # What the model saw on its second call: the code as it wrote it, the output as the user's.
    contents = model.requests[1].contents
    assert [c.role for c in contents] == ["user", "model", "user"]
    assert [p.text for p in contents[1].parts or []] == [
        "Let me compute.\n",
        "```tool_code\nimport os\nprint(6 * 7, os.getpid() != 0)\n```",
    ]
    assert contents[2].parts is not None
    assert contents[2].parts[0].text == "```tool_output\nCode execution result:\n42 True\n\n\n```"
    # The stored events keep the parts as parts.
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session is not None
    assert session.events[1].content is not None
    assert session.events[1].content.parts[-1].executable_code is not None  # type: ignore[index]
    assert session.state["answer"] == "It is 42."


async def test_the_code_runs_in_its_own_working_directory_and_files_become_artifacts() -> None:
    code = (
        "import os\n"
        "open('report.txt', 'w').write('all good')\n"
        "open('chart.png', 'wb').write(b'\\x89PNG fake')\n"
        "print(os.getcwd() != __import__('sys').argv[0])"
    )
    model = ScriptedLlm(script=[block(code), "Saved."])
    events, runner = await run(
        Agent(name="calc", model=model, code_executor=UnsafeLocalCodeExecutor()), "go"
    )
    result_event = events[1]
    assert result_event.actions.artifact_delta == {"chart.png": 0, "report.txt": 0}
    assert "Saved artifacts:\n`chart.png`,`report.txt`" in (result_of(result_event).output or "")
    saved = await runner.artifact_service.load_artifact(
        app_name=APP, user_id=USER, session_id=SESSION, filename="report.txt"
    )
    assert saved is not None and saved.inline_data is not None
    assert saved.inline_data.data == b"all good" and saved.inline_data.mime_type == "text/plain"
    assert not Path("report.txt").exists()  # not written where this process runs


async def test_a_failed_run_is_shown_and_runs_stop_after_error_retry_attempts() -> None:
    failing = block("raise ValueError('no such column')")
    model = ScriptedLlm(script=[failing, failing, failing])
    agent = Agent(
        name="calc",
        model=model,
        code_executor=UnsafeLocalCodeExecutor(error_retry_attempts=2),
    )
    events, runner = await run(agent, "go")
    results = [e for e in events if parts(e) and parts(e)[-1].code_execution_result]
    assert len(results) == 2
    for event in results:
        result = result_of(event)
        assert result.outcome == types.Outcome.OUTCOME_FAILED
        assert "ValueError: no such column" in (result.output or "")
        assert 'File "<code>", line 1' in (result.output or "")
    # The third reply's code is not run: it is the agent's answer, as the model wrote it.
    assert events[-1].is_final_response() and parts(events[-1])[0].text == failing
    assert results[-1].actions.state_delta == {
        "_code_execution_context": {}
    }  # counted from the log
    # A new invocation starts counting again.
    model.script.extend([block("print('fine')"), "ok"])
    more, _ = await _continue(runner, "again")
    assert result_of(more[1]).outcome == types.Outcome.OUTCOME_OK


async def _continue(runner: InMemoryRunner, text: str) -> tuple[list[Event], InMemoryRunner]:
    events = [
        e async for e in runner.run_async(user_id=USER, session_id=SESSION, new_message=said(text))
    ]
    return events, runner


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status  # a zombie has ended, waiting to be reaped


def test_a_run_is_killed_at_its_timeout_with_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    path = repr(str(pid_file))
    grandchild = (
        f"import os, time, pathlib; pathlib.Path({path}).write_text(str(os.getpid())); "
        "time.sleep(60)"
    )
    code = (
        "import pathlib, subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', {grandchild!r}])\n"
        f"ready = pathlib.Path({path})\n"
        "while not (ready.exists() and ready.read_text()):  # wait for the grandchild\n"
        "    time.sleep(0.01)\n"
        "print('started', flush=True)\n"
        "time.sleep(60)"
    )
    result = UnsafeLocalCodeExecutor(timeout_seconds=1).execute_code(
        None,  # type: ignore[arg-type]
        CodeExecutionInput(code=code),
    )
    assert result.stdout == "started\n", result.stderr
    assert result.stderr.endswith("Code execution timed out after 1 seconds.")
    assert not _alive(int(pid_file.read_text()))  # what the run started ended with it


def test_output_is_cut_at_max_output_bytes_and_says_so() -> None:
    executor = UnsafeLocalCodeExecutor(max_output_bytes=100)
    result = executor.execute_code(
        None,  # type: ignore[arg-type]
        CodeExecutionInput(code="import sys\nprint('x' * 5000)\nsys.stderr.write('y' * 300)"),
    )
    assert result.stdout.startswith("x" * 100 + "\n[output cut: the run wrote 5001 bytes")
    assert result.stderr == ""  # it exited 0: stderr of a good run is not a failure


def test_output_files_are_bounded_and_input_files_are_given() -> None:
    executor = UnsafeLocalCodeExecutor(max_output_file_bytes=10)
    code = (
        "data = open('in.csv').read()\n"
        "open('big.bin', 'w').write(data * 10)\n"
        "open('small.txt', 'w').write('ok')\n"
        "print(data)"
    )
    result = executor.execute_code(
        None,  # type: ignore[arg-type]
        CodeExecutionInput(code=code, input_files=[File(name="in.csv", content=b"a,b\n1,2")]),
    )
    assert result.stdout.startswith("a,b\n1,2\n")
    assert "not saved, over max_output_file_bytes=10: big.bin (70 bytes)" in result.stdout
    assert [(f.name, f.content) for f in result.output_files] == [("small.txt", b"ok")]


def test_exit_status_without_message_is_a_failure() -> None:
    result = UnsafeLocalCodeExecutor().execute_code(
        None,  # type: ignore[arg-type]
        CodeExecutionInput(code="import os\nos._exit(3)"),
    )
    assert result.stderr == "Code execution exited with status 3." and result.exit_code == 3


def test_the_app_modules_stay_importable_from_the_code() -> None:
    here = str(Path(__file__).resolve().parents[2])
    result = UnsafeLocalCodeExecutor().execute_code(
        None,  # type: ignore[arg-type]
        CodeExecutionInput(code="import cairn.code_executors, sys\nprint('ok')"),
    )
    assert result.stdout == "ok\n", (result.stderr, here, sys.path[:3])


def test_local_runs_are_always_bounded_and_keep_no_state() -> None:
    with pytest.raises(ValidationError, match="every run of model-written code is bounded"):
        UnsafeLocalCodeExecutor(timeout_seconds=None)
    with pytest.raises(ValidationError, match="cannot have stateful=True"):
        UnsafeLocalCodeExecutor(stateful=True)
    with pytest.raises(ValidationError, match="cannot have optimize_data_file=True"):
        UnsafeLocalCodeExecutor(optimize_data_file=True)
    with pytest.raises(ValidationError):
        UnsafeLocalCodeExecutor(timeout_seconds=0)


async def test_delimiters_of_ones_own_and_an_executor_that_raises() -> None:
    class Broken(BaseCodeExecutor):
        def execute_code(self, invocation_context: Any, code_execution_input: Any) -> Any:
            raise ConnectionError("sandbox down")

    executor = Broken(
        code_block_delimiters=[("<run>", "</run>")], execution_result_delimiters=("<out>", "</out>")
    )
    model = ScriptedLlm(script=["<run>print(1)</run>", "I could not run it."])
    events, _ = await run(Agent(name="calc", model=model, code_executor=executor), "go")
    result = result_of(events[1])
    assert result.outcome == types.Outcome.OUTCOME_FAILED
    assert result.output == "the code executor Broken failed: ConnectionError: sandbox down"
    contents = model.requests[1].contents
    assert contents[1].parts is not None and contents[1].parts[-1].text == "<run>print(1)</run>"
    assert contents[2].parts is not None
    assert contents[2].parts[0].text == f"<out>{result.output}</out>"


async def test_a_stateful_executor_gets_the_sessions_id() -> None:
    seen: list[CodeExecutionInput] = []

    class Remembering(BaseCodeExecutor):
        def execute_code(self, invocation_context: Any, code_execution_input: Any) -> Any:
            seen.append(code_execution_input)
            return CodeExecutionResult(stdout="done")

    model = ScriptedLlm(script=[block("x = 1"), "ok"])
    events, _ = await run(
        Agent(name="calc", model=model, code_executor=Remembering(stateful=True)), "go"
    )
    assert [s.execution_id for s in seen] == [SESSION]
    assert events[1].actions.state_delta["_code_execution_context"] == {
        "execution_session_id": SESSION
    }


async def test_an_llm_agent_node_outputs_its_answer_not_its_code() -> None:
    model = ScriptedLlm(script=[block("print(2 + 2)"), "Four."])
    coder = Agent(name="coder", model=model, code_executor=UnsafeLocalCodeExecutor())
    flow = Workflow(name="flow", edges=[(START, coder)])
    events, _ = await run(flow, "2+2?")
    outputs = [e.output for e in events if e.output is not None]
    assert outputs[-1] == "Four." and "print(2 + 2)" not in str(outputs)


# -- Gemini's own code execution -------------------------------------------------------------
async def test_built_in_code_executor_declares_geminis_tool_and_keeps_its_parts() -> None:
    reply = types.Content(
        role="model",
        parts=[
            types.Part(executable_code=types.ExecutableCode(code="print(4)", language="PYTHON")),
            types.Part(
                code_execution_result=types.CodeExecutionResult(outcome="OUTCOME_OK", output="4\n")
            ),
            types.Part(
                inline_data=types.Blob(mime_type="image/png", data=b"png", display_name="plot.png")
            ),
            types.Part(text="It is 4."),
        ],
    )
    model = ScriptedLlm(model="gemini-2.5-flash", script=[reply])
    events, runner = await run(
        Agent(name="gem", model=model, code_executor=BuiltInCodeExecutor()), "2+2?"
    )
    tools = model.requests[0].config.tools or []
    assert any(isinstance(t, types.Tool) and t.code_execution is not None for t in tools)
    [answer] = events
    assert answer.is_final_response()
    kept = parts(answer)
    assert kept[0].executable_code is not None and kept[1].code_execution_result is not None
    assert kept[2].text == "Saved as artifact: plot.png. " and kept[2].inline_data is None
    assert answer.actions.artifact_delta == {"plot.png": 0}
    saved = await runner.artifact_service.load_artifact(
        app_name=APP, user_id=USER, session_id=SESSION, filename="plot.png"
    )
    assert saved is not None and saved.inline_data is not None and saved.inline_data.data == b"png"


async def test_built_in_code_executor_needs_a_gemini_model() -> None:
    request = LlmRequest(model="openai/gpt-4o-mini")
    with pytest.raises(CodeExecutorError, match="needs a Gemini model"):
        BuiltInCodeExecutor().process_llm_request(request)
    for name in (
        "gemini-2.5-flash",
        "models/gemini-2.5-pro",
        "projects/p/locations/l/publishers/google/models/gemini-2.0-flash",
    ):
        BuiltInCodeExecutor().process_llm_request(LlmRequest(model=name))


# -- the container executor ------------------------------------------------------------------
def _engine_problem() -> str | None:
    try:
        import docker
    except ModuleNotFoundError:
        return "the docker package is not installed (pip install 'cairn[docker]')"
    try:
        docker.from_env().ping()
    except docker.errors.DockerException as error:
        return f"no container engine answers here ({error})"
    return None


ENGINE_PROBLEM = _engine_problem()


@pytest.mark.skipif(ENGINE_PROBLEM is None, reason="a container engine is reachable")
def test_without_an_engine_the_container_executor_says_how_to_fix_it() -> None:
    with pytest.raises((ContainerEngineUnavailableError, CodeExecutorError)) as raised:
        ContainerCodeExecutor(image="python:3.12-slim")
    assert "docker" in str(raised.value).lower()


def test_the_container_executor_needs_an_image_or_a_dockerfile() -> None:
    with pytest.raises(CodeExecutorError, match="needs image="):
        ContainerCodeExecutor()


@pytest.mark.skipif(ENGINE_PROBLEM is not None, reason=f"ContainerCodeExecutor: {ENGINE_PROBLEM}")
async def test_code_runs_in_a_container() -> None:
    image = os.environ.get("CAIRN_TEST_CONTAINER_IMAGE", "python:3.12-slim")
    with ContainerCodeExecutor(image=image, timeout_seconds=5, max_output_bytes=1000) as executor:
        model = ScriptedLlm(
            script=[block("open('out.txt','w').write('hi')\nprint('x' * 2000)"), "done"]
        )
        events, _ = await run(Agent(name="boxed", model=model, code_executor=executor), "go")
        result = result_of(events[1])
        assert result.outcome == types.Outcome.OUTCOME_OK
        assert "[output cut: the run wrote 2001 bytes" in (result.output or "")
        assert events[1].actions.artifact_delta == {"out.txt": 0}
        slow = executor.execute_code(None, CodeExecutionInput(code="import time; time.sleep(60)"))  # type: ignore[arg-type]
        assert "timed out after 5 seconds" in slow.stderr


# -- ADK's helpers ---------------------------------------------------------------------------
def test_extracting_code_prefers_an_unanswered_executable_code_part() -> None:
    content = types.Content(
        role="model",
        parts=[
            types.Part(text="see\n```python\nignored()\n```"),
            CodeExecutionUtils.build_executable_code_part("first()"),
            types.Part(text="after"),
        ],
    )
    assert (
        CodeExecutionUtils.extract_code_and_truncate_content(content, [("```python\n", "\n```")])
        == "first()"
    )
    assert len(content.parts or []) == 2
    earliest = types.Content(
        role="model", parts=[types.Part(text="a ```tool_code\nb()\n``` c ```python\nd()\n```")]
    )
    delimiters = [("```python\n", "\n```"), ("```tool_code\n", "\n```")]
    assert CodeExecutionUtils.extract_code_and_truncate_content(earliest, delimiters) == "b()"
    assert [p.text for p in earliest.parts or []] == ["a ", None]
    assert (
        CodeExecutionUtils.extract_code_and_truncate_content(
            types.Content(parts=[types.Part(text="no code")]), delimiters
        )
        is None
    )


def test_code_executor_context_records_changes_as_assignments() -> None:
    state: dict[str, Any] = {}
    record = CodeExecutorContext(state)
    record.increment_error_count("inv-1")
    record.increment_error_count("inv-1")
    assert record.get_error_count("inv-1") == 2 and state["_code_executor_error_counts"] == {
        "inv-1": 2
    }
    record.reset_error_count("inv-1")
    assert record.get_error_count("inv-1") == 0
    record.add_input_files([File(name="a.csv", content="YQ==", mime_type="text/csv")])
    assert CodeExecutorContext(state).get_input_files() == [
        File(name="a.csv", content="YQ==", mime_type="text/csv")
    ]
    record.set_execution_id("s1")
    record.add_processed_file_names(["a.csv"])
    assert record.get_state_delta() == {
        "_code_execution_context": {
            "execution_session_id": "s1",
            "processed_input_files": ["a.csv"],
        }
    }
    assert "_code_execution_context" not in state  # only through the delta
