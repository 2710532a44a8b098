"""Each plugin hook on its own: plugins run in registration order before the agent's own
callbacks, the first non-None answer short-circuits the rest and replaces the step, sync and
async hooks alike, and errors reach the error hooks. On the in-memory store and SQLite."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from cairn import Agent, App, Event, Runner
from cairn.agents.context import Context
from cairn.models.llm_response import LlmResponse
from cairn.plugins import BasePlugin, PluginCallbackName, PluginManager
from cairn.sessions.base_session_service import BaseSessionService
from cairn.sessions.in_memory_session_service import InMemorySessionService
from cairn.sessions.sqlite_session_service import SqliteSessionService
from cairn.testing import Call, ScriptedLlm

USER, SESSION = "u", "s"

MODEL_AND_TOOL_HOOKS = [
    "before_agent",
    "after_agent",
    "before_model",
    "after_model",
    "on_model_error",
    "before_tool",
    "after_tool",
    "on_tool_error",
]


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    service: BaseSessionService = (
        InMemorySessionService()
        if request.param == "memory"
        else SqliteSessionService(tmp_path / "sessions.db")
    )
    yield service
    await service.close()


class Hooks(BasePlugin):
    """Notes every hook it sees as ``<name>:<hook>``; answers the hooks in ``answers``."""

    def __init__(self, name: str, log: list[str], answers: dict[str, Any] | None = None):
        super().__init__(name)
        self.log = log
        self.answers = answers or {}

    def _seen(self, hook: str) -> Any:
        self.log.append(f"{self.name}:{hook}")
        answer = self.answers.get(hook)
        return answer() if callable(answer) else answer

    async def before_agent_callback(self, **kwargs: Any) -> Any:
        return self._seen("before_agent")

    async def after_agent_callback(self, **kwargs: Any) -> Any:
        return self._seen("after_agent")

    async def before_model_callback(self, **kwargs: Any) -> Any:
        return self._seen("before_model")

    async def after_model_callback(self, **kwargs: Any) -> Any:
        return self._seen("after_model")

    async def on_model_error_callback(self, **kwargs: Any) -> Any:
        return self._seen("on_model_error")

    async def before_tool_callback(self, **kwargs: Any) -> Any:
        assert set(kwargs) == {"tool", "tool_args", "tool_context"}
        return self._seen("before_tool")

    async def after_tool_callback(self, **kwargs: Any) -> Any:
        assert set(kwargs) == {"tool", "tool_args", "tool_context", "result"}
        return self._seen("after_tool")

    async def on_tool_error_callback(self, **kwargs: Any) -> Any:
        return self._seen("on_tool_error")

    async def on_agent_error_callback(self, **kwargs: Any) -> None:
        self._seen("on_agent_error")

    async def on_run_error_callback(self, **kwargs: Any) -> None:
        self._seen("on_run_error")

    async def after_run_callback(self, **kwargs: Any) -> None:
        self._seen("after_run")


def agent_callbacks(log: list[str]) -> dict[str, Any]:
    """Each of the agent's own callbacks, noting ``agent:<hook>`` and returning None."""

    def noting(hook: str) -> Any:
        def callback(*args: Any, **kwargs: Any) -> None:
            log.append(f"agent:{hook}")

        return callback

    return {f"{hook}_callback": noting(hook) for hook in MODEL_AND_TOOL_HOOKS}


def broken(n: int) -> int:
    """Fails."""
    raise ValueError("broken tool")


def double(n: int) -> int:
    """Doubles."""
    return 2 * n


def agent_for(script: list[Any], log: list[str]) -> Agent:
    return Agent(
        name="worker",
        model=ScriptedLlm(script=script),
        tools=[double, broken],
        **agent_callbacks(log),
    )


async def run(store: Any, agent: Agent, plugins: list[BasePlugin], text: str = "hi") -> list[Event]:
    runner = Runner(
        app=App(name="hooks", root_agent=agent, plugins=plugins),
        session_service=store,
        auto_create_session=True,
    )
    message = types.Content(role="user", parts=[types.Part(text=text)])
    events = [
        event
        async for event in runner.run_async(user_id=USER, session_id=SESSION, new_message=message)
    ]
    await runner.close()
    return events


async def stored(store: Any) -> list[Event]:
    session = await store.get_session(app_name="hooks", user_id=USER, session_id=SESSION)
    assert session is not None
    return list(session.events)


def hooks_of(log: list[str], hook: str) -> list[str]:
    return [entry.split(":")[0] for entry in log if entry.endswith(f":{hook}")]


@pytest.mark.parametrize("hook", MODEL_AND_TOOL_HOOKS)
async def test_plugins_run_in_order_before_the_agents_own_callbacks(store: Any, hook: str) -> None:
    log: list[str] = []
    script: list[Any] = [Call("double", n=2), Call("broken", n=1), "ok"]
    if hook == "on_model_error":
        script = [RuntimeError("provider down")]
    await run(store, agent_for(script, log), [Hooks("first", log), Hooks("second", log)])
    assert hooks_of(log, hook)[:3] == ["first", "second", "agent"]


async def test_a_plugins_model_answer_replaces_the_call_and_is_final(store: Any) -> None:
    log: list[str] = []
    cached = LlmResponse(content=types.Content(role="model", parts=[types.Part(text="cached")]))
    model = ScriptedLlm(script=["from the model"])
    agent = Agent(name="worker", model=model, **agent_callbacks(log))
    first = Hooks("first", log, {"before_model": cached})
    events = await run(store, agent, [first, Hooks("second", log)])
    assert model.requests == []  # the model was not called
    assert [e.content.parts[0].text for e in events if e.content] == ["cached"]
    assert "second:before_model" not in log and "agent:before_model" not in log
    # As in ADK, an answer given before the call is final: no after-model hook edits it.
    assert hooks_of(log, "after_model") == []
    assert (await stored(store))[-1].content.parts[0].text == "cached"  # type: ignore[union-attr]


async def test_a_plugin_replaces_the_models_response(store: Any) -> None:
    log: list[str] = []
    edited = LlmResponse(content=types.Content(role="model", parts=[types.Part(text="EDITED")]))
    events = await run(
        store, agent_for(["original"], log), [Hooks("first", log, {"after_model": edited})]
    )
    assert [e.content.parts[0].text for e in events if e.content] == ["EDITED"]
    assert "agent:after_model" not in log


async def test_a_plugin_answers_a_model_error(store: Any) -> None:
    log: list[str] = []
    rescue = LlmResponse(content=types.Content(role="model", parts=[types.Part(text="fallback")]))
    events = await run(
        store,
        agent_for([RuntimeError("provider down")], log),
        [Hooks("first", log, {"on_model_error": rescue})],
    )
    assert [e.content.parts[0].text for e in events if e.content] == ["fallback"]
    assert "agent:on_model_error" not in log


async def test_a_plugins_tool_answer_is_the_result_and_the_tool_does_not_run(store: Any) -> None:
    log: list[str] = []
    ran: list[int] = []

    def charge(n: int) -> int:
        """Charges."""
        ran.append(n)
        return n

    agent = Agent(
        name="worker",
        model=ScriptedLlm(script=[Call("charge", n=3), "ok"]),
        tools=[charge],
        **agent_callbacks(log),
    )
    await run(store, agent, [Hooks("guard", log, {"before_tool": {"refused": True}})])
    assert ran == []
    assert "agent:before_tool" not in log
    # After-tool hooks still see the answer (as in ADK), plugins first.
    assert hooks_of(log, "after_tool") == ["guard", "agent"]
    responses = [r.response for e in await stored(store) for r in e.get_function_responses()]
    assert responses == [{"refused": True}]


async def test_a_plugin_replaces_a_tool_result_and_answers_a_tool_error(store: Any) -> None:
    log: list[str] = []
    plugin = Hooks(
        "fixer",
        log,
        {"after_tool": lambda: {"replaced": True} if log.count("fixer:after_tool") == 1 else None},
    )
    plugin.answers["on_tool_error"] = {"recovered": True}
    agent = agent_for([Call("double", n=2), Call("broken", n=1), "ok"], log)
    await run(store, agent, [plugin])
    responses = [r.response for e in await stored(store) for r in e.get_function_responses()]
    assert responses == [{"replaced": True}, {"recovered": True}]
    assert "agent:on_tool_error" not in log
    assert log.count("agent:after_tool") == 1  # the second result went on to the agent's own


async def test_a_call_of_no_tool_reaches_the_plugins_error_hook(store: Any) -> None:
    seen: list[Exception] = []

    class Catch(BasePlugin):
        async def on_tool_error_callback(
            self, *, tool: Any, tool_args: Any, tool_context: Any, error: Exception
        ) -> Any:
            seen.append(error)
            return {"error": f"no tool {tool.name}"}

    agent = Agent(name="worker", model=ScriptedLlm(script=[Call("nothing"), "ok"]))
    await run(store, agent, [Catch("catch")])
    assert isinstance(seen[0], ValueError) and "nothing" in str(seen[0])
    responses = [r.response for e in await stored(store) for r in e.get_function_responses()]
    assert responses == [{"error": "no tool nothing"}]


async def test_plain_def_hooks_work_like_async_ones(store: Any) -> None:
    class Sync(BasePlugin):
        def before_tool_callback(self, *, tool: Any, tool_args: Any, tool_context: Context) -> Any:  # type: ignore[override]
            tool_context.state["checked"] = tool.name
            return {"from": "sync hook"}

        def before_model_callback(self, *, callback_context: Context, llm_request: Any) -> None:  # type: ignore[override]
            callback_context.state["prompted"] = True

    model = ScriptedLlm(script=[Call("double", n=1), "ok"])
    agent = Agent(name="worker", model=model, tools=[double])
    await run(store, agent, [Sync("sync")])
    events = await stored(store)
    assert [r.response for e in events for r in e.get_function_responses()] == [
        {"from": "sync hook"}
    ]
    session = await store.get_session(app_name="hooks", user_id=USER, session_id=SESSION)
    # What the hooks wrote is state the log holds: the model event and the tool's response.
    assert session.state["checked"] == "double" and session.state["prompted"] is True
    assert any(e.actions.state_delta.get("prompted") for e in events if e.get_function_calls())


async def test_a_failing_plugin_stops_the_step_naming_itself(store: Any) -> None:
    log: list[str] = []

    class Faulty(BasePlugin):
        async def before_tool_callback(self, **kwargs: Any) -> Any:
            raise KeyError("no such account")

    agent = agent_for([Call("double", n=2), "ok"], log)
    with pytest.raises(RuntimeError, match="plugin 'faulty' during 'before_tool_callback'") as info:
        await run(store, agent, [Faulty("faulty"), Hooks("watcher", log)])
    assert isinstance(info.value.__cause__, KeyError)
    # Every plugin hears of the error: the agent's and the invocation's error hooks.
    assert "watcher:on_agent_error" in log and "watcher:on_run_error" in log
    assert "watcher:after_run" not in log  # not after an error, as in ADK
    # What was committed before the failure stays.
    assert any(e.get_function_calls() for e in await stored(store))


async def test_error_hooks_are_notifications_a_failing_one_is_logged(store: Any) -> None:
    log: list[str] = []

    class Loud(BasePlugin):
        async def on_run_error_callback(self, **kwargs: Any) -> None:
            raise OSError("the pager is down")

    class Crash(BasePlugin):
        async def before_model_callback(self, **kwargs: Any) -> Any:
            raise ZeroDivisionError("boom")

    agent = agent_for(["ok"], log)
    with pytest.raises(RuntimeError) as info:
        await run(store, agent, [Crash("crash"), Loud("loud"), Hooks("last", log)])
    assert isinstance(info.value.__cause__, ZeroDivisionError)  # the original error
    assert "last:on_run_error" in log  # the others still heard of it


async def test_after_run_runs_when_the_caller_stops_reading(store: Any) -> None:
    log: list[str] = []
    runner = Runner(
        app=App(name="hooks", root_agent=agent_for(["one"], log), plugins=[Hooks("p", log)]),
        session_service=store,
        auto_create_session=True,
    )
    message = types.Content(role="user", parts=[types.Part(text="hi")])
    events = runner.run_async(user_id=USER, session_id=SESSION, new_message=message)
    await anext(events)
    await events.aclose()
    assert "p:after_run" in log and "p:on_run_error" not in log
    await runner.close()


def test_plugin_callback_name_lists_every_hook_of_base_plugin() -> None:
    names = set(PluginCallbackName.__args__)  # type: ignore[attr-defined]
    hooks = {name for name in vars(BasePlugin) if name.endswith("_callback")}
    assert names == hooks and len(names) == 14
    for name in names:  # and the manager runs each one
        assert callable(getattr(PluginManager, f"run_{name}"))


async def test_plugin_names_are_unique_and_close_reports_failures() -> None:
    with pytest.raises(ValueError, match="already registered"):
        PluginManager([BasePlugin("a"), BasePlugin("a")])
    with pytest.raises(TypeError, match="BasePlugin instances"):
        PluginManager([object()])  # type: ignore[list-item]
    closed: list[str] = []

    class Stubborn(BasePlugin):
        async def close(self) -> None:
            raise OSError("socket stuck")

    class Tidy(BasePlugin):
        async def close(self) -> None:
            closed.append(self.name)

    manager = PluginManager([Stubborn("stubborn"), Tidy("tidy")])
    with pytest.raises(RuntimeError, match="'stubborn': OSError"):
        await manager.close()
    assert closed == ["tidy"]  # the others are closed all the same
    manager.set_skip_closing_plugins(True)
    await manager.close()  # owned elsewhere: nothing closed, nothing raised
    assert closed == ["tidy"]


async def test_a_cancelled_tool_call_is_told_to_every_error_hook(store: Any) -> None:
    import asyncio

    started = asyncio.Event()
    heard: list[str] = []

    async def wait_forever(n: int) -> int:
        """Never returns."""
        started.set()
        await asyncio.Event().wait()
        return n

    class Cleanup(BasePlugin):
        async def on_tool_error_callback(self, *, error: BaseException, **kwargs: Any) -> Any:
            heard.append(f"{self.name}:{type(error).__name__}")
            if self.name == "first":
                raise OSError("cleanup failed")  # logged; the others still hear of it
            return {"recovered": True}  # ignored: a cancelled call is never recovered

    def own(tool: Any, args: Any, tool_context: Any, error: BaseException) -> None:
        heard.append(f"agent:{type(error).__name__}")

    agent = Agent(
        name="worker",
        model=ScriptedLlm(script=[Call("wait_forever", n=1)]),
        tools=[wait_forever],
        on_tool_error_callback=own,
    )
    task = asyncio.create_task(run(store, agent, [Cleanup("first"), Cleanup("second")]))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert heard == ["first:CancelledError", "second:CancelledError", "agent:CancelledError"]
