"""The plugins cairn ships at ADK's module paths, each on its own, on memory and SQLite."""

from __future__ import annotations

import sqlite3
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.genai import types

from cairn import Agent, App, Event, Runner
from cairn.artifacts.in_memory_artifact_service import InMemoryArtifactService
from cairn.models.llm_response import LlmResponse
from cairn.plugins import (
    BasePlugin,
    ContextFilterPlugin,
    DebugLoggingPlugin,
    GlobalInstructionPlugin,
    LoggingPlugin,
    MultimodalToolResultsPlugin,
    ReflectAndRetryModelPlugin,
    ReflectAndRetryToolPlugin,
    SaveFilesAsArtifactsPlugin,
    ToolCallIntegrityError,
    ToolCallIntegrityPlugin,
    ToolResultClassification,
)
from cairn.plugins.reflect_retry_tool_plugin import TrackingScope
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.sqlite_session_service import SqliteSessionService
from cairn.testing import Call, ScriptedLlm
from cairn.tools import FunctionTool

USER, SESSION = "u", "s"


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    service = (
        InMemorySessionService()
        if request.param == "memory"
        else SqliteSessionService(tmp_path / "sessions.db")
    )
    yield service
    await service.close()


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run(
    store: Any,
    agent: Agent,
    plugins: list[BasePlugin],
    *messages: types.Content | str,
    **runner_args: Any,
) -> list[Event]:
    runner = Runner(
        app=App(name="shipped", root_agent=agent, plugins=plugins),
        session_service=store,
        auto_create_session=True,
        **runner_args,
    )
    events: list[Event] = []
    for message in messages or ("hi",):
        content = said(message) if isinstance(message, str) else message
        async for event in runner.run_async(user_id=USER, session_id=SESSION, new_message=content):
            events.append(event)
    await runner.close()
    return events


async def stored(store: Any) -> list[Event]:
    session = await store.get_session(app_name="shipped", user_id=USER, session_id=SESSION)
    assert session is not None
    return list(session.events)


def responses(events: list[Event], name: str) -> list[dict[str, Any]]:
    return [
        dict(r.response or {}) for e in events for r in e.get_function_responses() if r.name == name
    ]


def texts(events: list[Event]) -> list[str]:
    return [p.text for e in events if e.content for p in e.content.parts or [] if p.text]


def flaky(n: int) -> int:
    """Fails."""
    raise ConnectionError("backend down")


def steady(n: int) -> int:
    """Works."""
    return n


# -- ReflectAndRetryToolPlugin ---------------------------------------------------------------
async def test_a_failed_tool_call_becomes_guidance_and_the_count_resets_on_success(
    store: Any,
) -> None:
    def sometimes(n: int) -> str:
        """Fails twice, works, then fails again."""
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    model = ScriptedLlm(script=[*(Call("sometimes", n=i) for i in range(4)), "done"])
    outcomes = iter([ConnectionError("a"), ConnectionError("b"), "fine", ConnectionError("c")])
    agent = Agent(name="worker", model=model, tools=[sometimes])
    await run(store, agent, [ReflectAndRetryToolPlugin(max_retries=3)])
    answers = responses(await stored(store), "sometimes")
    assert [a.get("retry_count") for a in answers] == [1, 2, None, 1]
    assert answers[0]["error_type"] == "ConnectionError"
    assert answers[0]["response_type"] == "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"
    assert "retry 1 of 3" in answers[0]["reflection_guidance"]
    # The model is shown the guidance as the call's result.
    shown = model.requests[1].contents[-1].parts[0].function_response
    assert shown is not None and shown.response == answers[0]


async def test_past_the_retry_limit_the_error_is_raised_or_the_model_told_to_stop(
    store: Any,
) -> None:
    script = [Call("flaky", n=i) for i in range(3)] + ["stopped"]
    agent = Agent(name="worker", model=ScriptedLlm(script=list(script)), tools=[flaky])
    with pytest.raises(RuntimeError, match="reflect_retry_tool_plugin") as info:
        await run(store, agent, [ReflectAndRetryToolPlugin(max_retries=2)])
    assert isinstance(info.value.__cause__, ConnectionError)
    second = Agent(name="worker", model=ScriptedLlm(script=list(script)), tools=[flaky])
    fresh = InMemorySessionService()
    plugin = ReflectAndRetryToolPlugin(max_retries=2, throw_exception_if_retry_exceeded=False)
    await run(fresh, second, [plugin])
    answers = responses(await stored(fresh), "flaky")
    assert [a["retry_count"] for a in answers] == [1, 2, 2]
    assert "Do not call `flaky` again" in answers[-1]["reflection_guidance"]


async def test_errors_found_in_results_and_the_global_scope(store: Any) -> None:
    class StatusErrors(ReflectAndRetryToolPlugin):
        async def extract_error_from_result(self, *, result: Any, **kwargs: Any) -> Any:
            return result if isinstance(result, dict) and result.get("status") == "error" else None

    def report(n: int) -> dict[str, str]:
        """Reports an error without raising."""
        return {"status": "error", "why": "quota"}

    model = ScriptedLlm(script=[Call("report", n=1), "ok", Call("report", n=2), "ok"])
    agent = Agent(name="worker", model=model, tools=[report])
    plugin = StatusErrors(max_retries=5, tracking_scope=TrackingScope.GLOBAL)
    await run(store, agent, [plugin], "first", "second")
    # Global scope: the second invocation goes on counting from the first.
    assert [a["retry_count"] for a in responses(await stored(store), "report")] == [1, 2]
    with pytest.raises(ValueError, match="non-negative"):
        ReflectAndRetryToolPlugin(max_retries=-1)


# -- ReflectAndRetryModelPlugin --------------------------------------------------------------
def malformed() -> LlmResponse:
    return LlmResponse(
        error_code="MALFORMED_FUNCTION_CALL",
        error_message="the call could not be parsed",
        finish_reason=types.FinishReason.MALFORMED_FUNCTION_CALL,
    )


async def test_a_malformed_model_reply_is_retried_through_the_reserved_tool(store: Any) -> None:
    model = ScriptedLlm(script=[malformed(), "recovered"])
    agent = Agent(name="worker", model=model)
    events = await run(store, agent, [ReflectAndRetryModelPlugin(max_retries=2)])
    assert texts(events) == ["recovered"]
    logged = await stored(store)
    calls = [c for e in logged for c in e.get_function_calls()]
    assert [c.name for c in calls] == ["adk_handle_model_error"]
    assert calls[0].args["retry_count"] == 1
    assert calls[0].args["finish_reason"] == "MALFORMED_FUNCTION_CALL"
    guidance = responses(logged, "adk_handle_model_error")[0]["reflection_guidance"]
    assert "retry 1 of 2" in guidance
    assert len(model.requests) == 2  # the model was asked again, shown the guidance


async def test_model_retries_stop_at_the_limit(store: Any) -> None:
    agent = Agent(name="worker", model=ScriptedLlm(script=[malformed(), malformed()]))
    with pytest.raises(RuntimeError, match="retry limit") as info:
        await run(store, agent, [ReflectAndRetryModelPlugin(max_retries=1)])
    assert "reflect_retry_model_plugin" in str(info.value)
    with pytest.raises(ValueError, match="FinishReason"):
        ReflectAndRetryModelPlugin(on_model_errors=["MALFORMED"])  # type: ignore[list-item]


# -- GlobalInstructionPlugin -----------------------------------------------------------------
async def test_the_global_instruction_comes_before_every_agents_own(store: Any) -> None:
    model = ScriptedLlm(script=["one", "two"])
    agent = Agent(name="worker", model=model, instruction="Be brief.")

    def provider(context: Any) -> str:
        return f"Session {context.session.id}."

    plugins: list[BasePlugin] = [
        GlobalInstructionPlugin("You serve {org}."),
    ]
    runner_store = store
    session = await runner_store.create_session(
        app_name="shipped", user_id=USER, session_id=SESSION, state={"org": "ACME"}
    )
    assert session is not None
    await run(store, agent, plugins)
    first = model.requests[0].system_instruction_text
    assert first.startswith("You serve ACME.\n\n") and "Be brief." in first
    await run(store, agent, [GlobalInstructionPlugin(provider, name="by_provider")])
    assert model.requests[1].system_instruction_text.startswith(f"Session {SESSION}.")


# -- ContextFilterPlugin ---------------------------------------------------------------------
async def test_the_context_filter_trims_the_prompt_not_the_log(store: Any) -> None:
    model = ScriptedLlm(script=["a1", Call("steady", n=1), "a2", "a3"])
    agent = Agent(name="worker", model=model, tools=[steady])
    plugin = ContextFilterPlugin(num_invocations_to_keep=2)
    await run(store, agent, [plugin], "q1", "q2", "q3")
    last = model.requests[-1].contents
    shown = [p.text for c in last for p in c.parts or [] if p.text]
    assert shown == ["q2", "a2", "q3"]  # two turns kept, their tool call and result with them
    assert any(p.function_call for c in last for p in c.parts or [])
    assert len([e for e in await stored(store) if e.author == "user"]) == 3  # the log keeps all

    model_two = ScriptedLlm(script=["x"])
    keep_last = ContextFilterPlugin(custom_filter=lambda contents: contents[-1:])
    await run(InMemorySessionService(), Agent(name="w", model=model_two), [keep_last], "only")
    assert len(model_two.requests[0].contents) == 1
    with pytest.raises(ValueError, match="remove_amount"):
        ContextFilterPlugin(remove_amount=0)


# -- MultimodalToolResultsPlugin -------------------------------------------------------------
async def test_parts_a_tool_returns_go_to_the_next_model_request(store: Any) -> None:
    def chart(n: int) -> types.Part:
        """Draws a chart."""
        return types.Part(text=f"chart of {n} bars")

    model = ScriptedLlm(script=[Call("chart", n=3), "described", "again"])
    agent = Agent(name="worker", model=model, tools=[chart])
    await run(store, agent, [MultimodalToolResultsPlugin()], "draw", "more")
    attached = model.requests[1].contents[-1].parts or []
    assert attached[-1].text == "chart of 3 bars"
    # next_model_call: attached once, not to later requests.
    later = [p.text for c in model.requests[2].contents for p in c.parts or []]
    assert later.count("chart of 3 bars") == 0
    with pytest.raises(ValueError, match="retention"):
        MultimodalToolResultsPlugin(retention="forever")  # type: ignore[arg-type]


async def test_session_retention_keeps_the_latest_parts_in_the_log(store: Any) -> None:
    def chart(n: int) -> types.Part:
        """Draws a chart."""
        return types.Part(text=f"chart {n}")

    model = ScriptedLlm(script=[Call("chart", n=1), "seen", "still"])
    agent = Agent(name="worker", model=model, tools=[chart])
    await run(store, agent, [MultimodalToolResultsPlugin(retention="session")], "draw", "next")
    later = [p.text for c in model.requests[2].contents[-1:] for p in c.parts or []]
    assert "chart 1" in later  # re-attached on the next turn, from session state
    session = await store.get_session(app_name="shipped", user_id=USER, session_id=SESSION)
    key = "multimodal_tool_results_plugin:PARTS_RETURNED_BY_TOOLS_ID"
    assert session.state[key] == [{"text": "chart 1"}]


# -- SaveFilesAsArtifactsPlugin --------------------------------------------------------------
async def test_attached_files_become_artifacts_recorded_in_the_log(store: Any) -> None:
    artifacts = InMemoryArtifactService()
    model = ScriptedLlm(script=["got it"])
    message = types.Content(
        role="user",
        parts=[
            types.Part(text="see attached"),
            types.Part(
                inline_data=types.Blob(
                    data=b"%PDF-1", mime_type="application/pdf", display_name="r.pdf"
                )
            ),
        ],
    )
    await run(
        store,
        Agent(name="worker", model=model),
        [SaveFilesAsArtifactsPlugin()],
        message,
        artifact_service=artifacts,
    )
    saved = await artifacts.load_artifact(
        app_name="shipped", user_id=USER, session_id=SESSION, filename="r.pdf"
    )
    assert saved is not None and saved.inline_data is not None
    assert saved.inline_data.data == b"%PDF-1"
    logged = await stored(store)
    user_parts = [p.text for p in logged[0].content.parts or []]  # type: ignore[union-attr]
    assert user_parts == ["see attached", '[Uploaded Artifact: "r.pdf"]']
    assert {"r.pdf": 0} in [dict(e.actions.artifact_delta) for e in logged]
    shown = [p.text for c in model.requests[0].contents for p in c.parts or []]
    assert '[Uploaded Artifact: "r.pdf"]' in shown


# -- ToolCallIntegrityPlugin -----------------------------------------------------------------
def pay(amount: int) -> dict[str, int]:
    """Pays."""
    return {"paid": amount}


def tamper(db: Path, old: str, new: str) -> int:
    """Rewrite ``old`` as ``new`` in every text cell of the SQLite file: what someone with
    write access to the store could do. The number of cells changed."""
    changed = 0
    with sqlite3.connect(db) as connection:
        tables = [
            r[0] for r in connection.execute("select name from sqlite_master where type='table'")
        ]
        for table in tables:
            columns = [r[1] for r in connection.execute(f"pragma table_info('{table}')")]
            for column in columns:
                cursor = connection.execute(
                    f'update "{table}" set "{column}" = replace("{column}", ?, ?) '
                    f'where typeof("{column}") = \'text\' and instr("{column}", ?) > 0',
                    (old, new, old),
                )
                changed += cursor.rowcount
    return changed


async def confirm_all(runner: Runner) -> list[Event]:
    pending = await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=i.id, name=i.name, response={"confirmed": True}
                )
            )
            for i in pending
        ],
    )
    return [e async for e in runner.run_async(user_id=USER, session_id=SESSION, new_message=answer)]


def integrity_runner(db: Path, key: bytes = b"k" * 32) -> Runner:
    agent = Agent(
        name="cashier",
        model=ScriptedLlm(
            respond=lambda request: "done" if len(request.contents) > 2 else Call("pay", amount=5)
        ),
        tools=[FunctionTool(pay, require_confirmation=True)],
    )
    return Runner(
        app=App(
            name="shipped", root_agent=agent, plugins=[ToolCallIntegrityPlugin(secret_key=key)]
        ),
        session_service=SqliteSessionService(db),
        auto_create_session=True,
    )


async def test_a_call_changed_in_the_store_while_paused_does_not_run(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    first = integrity_runner(db)
    events = [
        e async for e in first.run_async(user_id=USER, session_id=SESSION, new_message=said("pay"))
    ]
    stamped = [e for e in events if e.get_function_calls()]
    assert all("__adk_internal_fc_hmac" in (e.custom_metadata or {}) for e in stamped)
    await first.close()
    await first.session_service.close()

    untouched = integrity_runner(db)  # a new Runner (as a new process would have) verifies
    done = await confirm_all(untouched)
    assert responses(done, "pay") == [{"paid": 5}]
    await untouched.close()
    await untouched.session_service.close()


async def test_tampered_arguments_are_refused(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    first = integrity_runner(db)
    [e async for e in first.run_async(user_id=USER, session_id=SESSION, new_message=said("pay"))]
    await first.close()
    await first.session_service.close()
    assert tamper(db, '"amount":5', '"amount":500') + tamper(db, '"amount": 5', '"amount": 500')

    resumed = integrity_runner(db)
    with pytest.raises(RuntimeError) as info:
        await confirm_all(resumed)
    assert isinstance(info.value.__cause__, ToolCallIntegrityError)
    assert "does not match its integrity stamp" in str(info.value.__cause__)
    await resumed.close()
    await resumed.session_service.close()
    with pytest.raises(ValueError, match="secret_key"):
        ToolCallIntegrityPlugin(secret_key=b"")


# -- LoggingPlugin and DebugLoggingPlugin ----------------------------------------------------
async def test_the_logging_plugin_prints_each_step_and_a_handled_error_once(
    store: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    model = ScriptedLlm(script=[Call("flaky", n=1), Call("steady", n=2), "done"])
    agent = Agent(name="worker", model=model, tools=[flaky, steady])
    await run(store, agent, [LoggingPlugin(), ReflectAndRetryToolPlugin()])
    out = capsys.readouterr().out
    for title in (
        "USER MESSAGE RECEIVED",
        "INVOCATION STARTING",
        "AGENT STARTING",
        "LLM REQUEST",
        "LLM RESPONSE",
        "TOOL STARTING",
        "TOOL COMPLETED",
        "EVENT YIELDED",
        "AGENT COMPLETED",
        "INVOCATION COMPLETED",
    ):
        assert f"[logging_plugin] {title}" in out, title
    assert out.count("TOOL ERROR") == 1  # the raised error, not again as the retry's answer


async def test_a_classifier_decides_which_results_are_errors(
    store: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    def classify(*, tool: Any, tool_args: Any, tool_context: Any, result: Any) -> Any:
        if result == 0:  # a tool's own value, as it returned it
            return ToolResultClassification(status="ERROR", error_message="zero is a failure")
        return None

    model = ScriptedLlm(script=[Call("steady", n=0), "done"])
    agent = Agent(name="worker", model=model, tools=[steady])
    await run(store, agent, [LoggingPlugin(tool_result_classifier=classify)])
    assert "Error: zero is a failure" in capsys.readouterr().out

    async def asynchronous(**kwargs: Any) -> None:
        return None

    with pytest.raises(ValueError, match="synchronous"):
        LoggingPlugin(tool_result_classifier=asynchronous)
    with pytest.raises(ValueError, match="status"):
        ToolResultClassification(status="MAYBE")  # type: ignore[arg-type]


async def test_the_debug_log_holds_each_invocation_without_secrets(
    store: Any, tmp_path: Path
) -> None:
    output = tmp_path / "debug.yaml"

    def remember(n: int, tool_context: Any) -> int:
        """Keeps a key."""
        tool_context.state["api_key"] = "sk-live-123"
        tool_context.state["temp:scratch"] = "intermediate"
        return n

    model = ScriptedLlm(script=[Call("remember", n=1), "done", "again"])
    agent = Agent(name="worker", model=model, tools=[remember])
    await run(store, agent, [DebugLoggingPlugin(output_path=str(output))], "one", "two")
    documents = list(yaml.safe_load_all(output.read_text()))
    assert len(documents) == 2  # one per invocation
    kinds = [entry["entry_type"] for entry in documents[0]["entries"]]
    for kind in ("user_message", "invocation_start", "agent_start", "llm_request"):
        assert kind in kinds
    assert {"tool_call", "tool_response", "event", "session_state", "invocation_end"} <= set(kinds)
    text = output.read_text()
    assert "sk-live-123" not in text and "intermediate" not in text
    assert stat.S_IMODE(output.stat().st_mode) == 0o600
