"""The LLM agent loop end to end, on a scripted model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.genai import types
from pydantic import BaseModel

from cairn import Agent, Event, InMemoryRunner, LlmAgent, LlmResponse, RunConfig, ToolContext
from cairn.agents import StreamingMode
from cairn.agents.instructions import MissingInstructionVariableError
from cairn.testing import Call, ScriptedLlm, Stream

APP, USER, SESSION = "demo", "u1", "s1"


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def start(agent: LlmAgent) -> InMemoryRunner:
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    return runner


async def turn(runner: InMemoryRunner, message: types.Content, **kwargs: Any) -> list[Event]:
    return [
        e
        async for e in runner.run_async(
            user_id=USER, session_id=SESSION, new_message=message, **kwargs
        )
    ]


async def stored(runner: InMemoryRunner) -> Any:
    return await runner.session_service.get_session(app_name=APP, user_id=USER, session_id=SESSION)


def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """Look up the weather.

    Args:
        city: the city to look up.
    """
    tool_context.state["last_city"] = city
    tool_context.state["temp:lookups"] = tool_context.state.get("temp:lookups", 0) + 1
    return {"city": city, "celsius": 23}


async def test_a_tool_call_then_an_answer() -> None:
    llm = ScriptedLlm(script=[Call("get_weather", city="Hangzhou"), "It is 23°C in Hangzhou."])
    agent = Agent(
        name="weather", model=llm, instruction="Answer about {topic?} weather.", tools=[get_weather]
    )
    runner = await start(agent)
    events = await turn(runner, said("Weather in Hangzhou?"))

    call_event, result_event, answer = events
    assert call_event.get_function_calls()[0].name == "get_weather"
    assert result_event.get_function_responses()[0].response == {"city": "Hangzhou", "celsius": 23}
    assert result_event.actions.state_delta == {"last_city": "Hangzhou", "temp:lookups": 1}
    assert answer.is_final_response() and answer.content.parts[0].text.startswith("It is 23")
    session = await stored(runner)
    assert session.state == {"last_city": "Hangzhou"}
    assert [e.author for e in session.events] == ["user", "weather", "weather", "weather"]

    first, second = llm.requests
    assert first.system_instruction_text.startswith("Answer about  weather.")
    declaration = first.function_declarations[0]
    assert declaration.name == "get_weather" and declaration.description == "Look up the weather."
    assert declaration.parameters_json_schema["properties"]["city"]["description"] == (
        "the city to look up."
    )
    assert "tool_context" not in declaration.parameters_json_schema["properties"]
    # The second call sees the call and its result, ids matching.
    call = second.contents[1].parts[0].function_call
    response = second.contents[2].parts[0].function_response
    assert call.id and call.id == response.id


async def test_parallel_calls_run_concurrently() -> None:
    started: list[str] = []
    both_running = asyncio.Event()

    async def slow_lookup(key: str) -> str:
        started.append(key)
        if len(started) == 2:
            both_running.set()
        await asyncio.wait_for(both_running.wait(), timeout=2)  # deadlocks if run one by one
        return key.upper()

    llm = ScriptedLlm(script=[[Call("slow_lookup", key="a"), Call("slow_lookup", key="b")], "ok"])
    runner = await start(Agent(name="par", model=llm, tools=[slow_lookup]))
    events = await turn(runner, said("go"))
    responses = events[1].get_function_responses()
    assert [r.response for r in responses] == [{"result": "A"}, {"result": "B"}]


async def test_wrong_arguments_and_failing_tools_go_back_to_the_model() -> None:
    def boom(n: int) -> int:
        raise RuntimeError("disk on fire")

    llm = ScriptedLlm(
        script=[
            [Call("boom", n="not a number"), Call("boom", n=1), Call("nope")],
            "sorry",
        ]
    )
    runner = await start(Agent(name="t", model=llm, tools=[boom]))
    events = await turn(runner, said("go"))
    errors = [r.response["error"] for r in events[1].get_function_responses()]
    assert "invalid arguments for tool 'boom'" in errors[0] and "n" in errors[0]
    assert "disk on fire" in errors[1]
    assert "no tool named 'nope'" in errors[2]
    assert events[-1].content.parts[0].text == "sorry"


async def test_transfer_to_a_sub_agent_and_chat_continues_with_it() -> None:
    helper_llm = ScriptedLlm(
        script=[
            "Helper here.",
            "Still me.",
            Call("transfer_to_agent", agent_name="root"),
        ]
    )
    root_llm = ScriptedLlm(script=[Call("transfer_to_agent", agent_name="helper"), "Root again."])
    helper = Agent(name="helper", model=helper_llm, description="Helps with details.")
    root = Agent(name="root", model=root_llm, sub_agents=[helper])
    runner = await start(root)

    first = await turn(runner, said("I need help"))
    assert [e.author for e in first] == ["root", "root", "helper"]
    assert first[1].actions.transfer_to_agent == "helper"
    assert "helper: Helps with details." in root_llm.requests[0].system_instruction_text

    second = await turn(runner, said("more"))  # chat mode: the helper keeps the conversation
    assert [e.author for e in second] == ["helper"] and second[0].content.parts[0].text == (
        "Still me."
    )
    third = await turn(runner, said("back to root please"))
    assert [e.author for e in third] == ["helper", "helper", "root"]
    assert third[-1].content.parts[0].text == "Root again."
    # The helper saw the root's earlier turns as context, not as its own.
    context = helper_llm.requests[0].contents
    assert any(
        "[root] called tool `transfer_to_agent`" in (p.text or "")
        for c in context
        for p in c.parts or []
    )


class Forecast(BaseModel):
    city: str
    celsius: int


async def test_output_key_and_output_schema() -> None:
    llm = ScriptedLlm(script=['{"city": "Lisbon", "celsius": 19}', "not json"])
    agent = Agent(name="f", model=llm, output_schema=Forecast, output_key="forecast")
    runner = await start(agent)
    await turn(runner, said("forecast"))
    assert (await stored(runner)).state["forecast"] == {"city": "Lisbon", "celsius": 19}
    assert llm.requests[0].config.response_mime_type == "application/json"
    bad = await turn(runner, said("again"))
    assert bad[-1].error_code == "OUTPUT_SCHEMA_MISMATCH" and "Forecast" in bad[-1].error_message
    assert (await stored(runner)).state["forecast"] == {"city": "Lisbon", "celsius": 19}


async def test_callbacks_short_circuit() -> None:
    def cached_answer(callback_context: Any, llm_request: Any) -> LlmResponse | None:
        if "cached" in str(llm_request.contents[-1]):
            return LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text="from cache")])
            )
        return None

    def fake_tool(tool: Any, args: dict[str, Any], tool_context: Any) -> dict[str, Any] | None:
        return {"stubbed": args["city"]} if args.get("city") == "Nowhere" else None

    def shout(callback_context: Any, llm_response: LlmResponse) -> LlmResponse | None:
        parts = llm_response.content.parts if llm_response.content else []
        if parts and parts[0].text:
            return LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text=parts[0].text.upper())])
            )
        return None

    llm = ScriptedLlm(script=[Call("get_weather", city="Nowhere"), "done"])
    agent = Agent(
        name="cb",
        model=llm,
        tools=[get_weather],
        before_model_callback=cached_answer,
        before_tool_callback=fake_tool,
        after_model_callback=shout,
    )
    runner = await start(agent)
    cached = await turn(runner, said("cached please"))
    # As ADK: a before_model_callback's reply is final (after_model_callback does not run).
    assert cached[0].content.parts[0].text == "from cache" and llm.requests == []
    events = await turn(runner, said("weather"))
    assert events[1].get_function_responses()[0].response == {"stubbed": "Nowhere"}
    assert "last_city" not in (await stored(runner)).state  # the tool never ran
    assert events[-1].content.parts[0].text == "DONE"


async def test_streaming_partials_are_yielded_not_stored() -> None:
    llm = ScriptedLlm(script=[Stream(["Hel", "lo ", "there"])])
    runner = await start(Agent(name="s", model=llm))
    events = await turn(runner, said("hi"), run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    assert [e.partial for e in events] == [True, True, True, None]
    assert events[-1].content.parts[0].text == "Hello there"
    session = await stored(runner)
    assert [e.id for e in session.events][1:] == [events[-1].id]


async def test_runaway_loop_is_stopped_by_max_llm_calls() -> None:
    llm = ScriptedLlm(script=[Call("get_weather", city="X")] * 10)
    runner = await start(Agent(name="loop", model=llm, tools=[get_weather]))
    events = await turn(runner, said("go"), run_config=RunConfig(max_llm_calls=3))
    assert len(llm.requests) == 3
    assert events[-1].error_code == "MAX_LLM_CALLS_EXCEEDED"
    assert "max_llm_calls=3" in events[-1].error_message
    assert (await stored(runner)).events[-1].error_code == "MAX_LLM_CALLS_EXCEEDED"


async def test_long_running_tool_pauses_and_its_response_resumes() -> None:
    from cairn import LongRunningFunctionTool

    def ask_manager(amount: int) -> None:
        """Ask a manager to approve a refund."""
        return None

    llm = ScriptedLlm(script=[Call("ask_manager", id="fc-1", amount=50), "Refund approved."])
    runner = await start(
        Agent(name="refunds", model=llm, tools=[LongRunningFunctionTool(ask_manager)])
    )
    paused = await turn(runner, said("refund 50"))
    assert len(paused) == 1 and paused[0].long_running_tool_ids == {"fc-1"}
    assert paused[0].is_final_response()
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id="fc-1", name="ask_manager", response={"approved": True}
                )
            )
        ],
    )
    resumed = await turn(runner, answer)
    assert resumed[-1].content.parts[0].text == "Refund approved."
    last_request = llm.requests[-1].contents
    assert last_request[-1].parts[0].function_response.response == {"approved": True}


async def test_instruction_variables() -> None:
    llm = ScriptedLlm(script=["hi"])
    agent = Agent(name="i", model=llm, instruction="Unit: {user:unit}. City: {city?}. {not a var}")
    runner = await start(agent)
    await turn(runner, said("x"), state_delta={"user:unit": "C"})
    assert llm.requests[0].system_instruction_text.startswith("Unit: C. City: . {not a var}")
    strict = Agent(name="j", model=ScriptedLlm(script=["hi"]), instruction="Hello {name}")
    runner = InMemoryRunner(agent=strict, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    with pytest.raises(MissingInstructionVariableError, match=r"\{name\}.*'j'|'j'.*\{name\}"):
        await turn(runner, said("x"))


async def test_model_errors_become_an_error_event_unless_handled() -> None:
    failing = Agent(name="e", model=ScriptedLlm(script=[RuntimeError("quota exceeded")]))
    runner = await start(failing)
    events = await turn(runner, said("x"))
    assert events[-1].error_code == "RuntimeError" and "quota exceeded" in events[-1].error_message

    def fallback(callback_context: Any, llm_request: Any, error: Exception) -> LlmResponse:
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text="fallback")]))

    handled = Agent(
        name="h", model=ScriptedLlm(script=[RuntimeError("x")]), on_model_error_callback=fallback
    )
    runner = await start(handled)
    assert (await turn(runner, said("x")))[-1].content.parts[0].text == "fallback"


def test_a_task_or_single_turn_root_agent_runs_as_in_adk() -> None:
    for mode in ("task", "single_turn"):
        agent = Agent(name="t", model=ScriptedLlm(script=["task done"]), mode=mode)  # type: ignore[arg-type]
        runner = InMemoryRunner(agent=agent, app_name=APP)
        asyncio.run(
            runner.session_service.create_session(app_name=APP, user_id=USER, session_id="s")
        )
        events = list(runner.run(user_id=USER, session_id="s", new_message=said("x")))
        assert events[-1].author == "t" and events[-1].is_final_response()
        assert events[-1].content is not None and events[-1].content.parts is not None
        assert events[-1].content.parts[0].text == "task done"


async def test_transfer_to_an_unknown_agent_is_refused_to_the_model() -> None:
    llm = ScriptedLlm(script=[Call("transfer_to_agent", agent_name="ghost"), "Staying here."])
    root = Agent(name="root", model=llm, sub_agents=[Agent(name="real", model=ScriptedLlm())])
    runner = await start(root)
    events = await turn(runner, said("go"))
    refusal = events[1].get_function_responses()[0].response["error"]
    assert "'ghost'" in refusal and "real" in refusal
    assert events[1].actions.transfer_to_agent is None
    assert events[-1].author == "root" and events[-1].content.parts[0].text == "Staying here."


async def test_a_compaction_summary_replaces_the_events_it_covers() -> None:
    from cairn import EventActions, EventCompaction

    llm = ScriptedLlm(script=["first", "second", "third"])
    runner = await start(Agent(name="c", model=llm))
    await turn(runner, said("old question"))
    await turn(runner, said("another old one"))
    session = await stored(runner)
    summary = Event(
        author="user",
        actions=EventActions(
            compaction=EventCompaction(
                start_timestamp=session.events[0].timestamp,
                end_timestamp=session.events[-1].timestamp,
                compacted_content=types.Content(
                    role="model", parts=[types.Part(text="The user asked two old questions.")]
                ),
            )
        ),
    )
    await runner.session_service.append_event(session, summary)
    await turn(runner, said("new question"))
    texts = [p.text for c in llm.requests[-1].contents for p in c.parts or []]
    assert texts == [
        "Summary of the earlier conversation:\nThe user asked two old questions.",
        "new question",
    ]
    assert len((await stored(runner)).events) == 7  # the log keeps everything


async def test_tool_callbacks_after_and_on_error() -> None:
    def explode(n: int) -> int:
        raise ValueError("bad n")

    def soften(tool: Any, args: dict[str, Any], tool_context: Any, error: Exception) -> dict:
        return {"recovered": str(error)}

    def annotate(tool: Any, args: dict[str, Any], tool_context: Any, tool_response: Any) -> dict:
        return {"annotated": tool_response}

    llm = ScriptedLlm(script=[[Call("explode", n=1), Call("get_weather", city="Oslo")], "ok"])
    agent = Agent(
        name="cb",
        model=llm,
        tools=[explode, get_weather],
        on_tool_error_callback=soften,
        after_tool_callback=annotate,
    )
    runner = await start(agent)
    events = await turn(runner, said("go"))
    responses = [r.response for r in events[1].get_function_responses()]
    # As ADK: after_tool_callback sees the on_tool_error_callback's answer too.
    assert responses == [
        {"annotated": {"recovered": "bad n"}},
        {"annotated": {"city": "Oslo", "celsius": 23}},
    ]


async def test_after_tool_callback_sees_what_a_before_tool_callback_answered() -> None:
    def stub(tool: Any, args: dict[str, Any], tool_context: Any) -> dict[str, Any] | None:
        return {"city": "Atlantis", "celsius": None} if args.get("city") == "Atlantis" else None

    seen: list[Any] = []

    def check(tool: Any, args: dict[str, Any], tool_context: Any, tool_response: Any) -> dict:
        seen.append(tool_response)
        return {**tool_response, "checked": True}

    def explode(n: int) -> int:
        raise ValueError("bad n")

    llm = ScriptedLlm(script=[[Call("get_weather", city="Atlantis"), Call("explode", n=1)], "ok"])
    agent = Agent(
        name="cb",
        model=llm,
        tools=[get_weather, explode],
        before_tool_callback=stub,
        after_tool_callback=check,
    )
    runner = await start(agent)
    events = await turn(runner, said("go"))
    atlantis, failed = [r.response for r in events[1].get_function_responses()]
    assert atlantis == {"city": "Atlantis", "celsius": None, "checked": True}
    assert "last_city" not in (await stored(runner)).state  # the tool itself never ran
    # A failure nothing handled is cairn's own answer: no after_tool_callback for it.
    assert failed == {"error": "tool 'explode' failed: ValueError: bad n"}
    assert seen == [{"city": "Atlantis", "celsius": None}]


async def test_instructions_config_and_transfer_limits_reach_the_request() -> None:
    def dynamic(ctx: Any) -> str:
        return f"Dynamic for {ctx.agent_name}."

    child_llm = ScriptedLlm(script=["child"])
    child = Agent(
        name="child",
        model=child_llm,
        instruction=dynamic,
        static_instruction="Static part.",
        disallow_transfer_to_parent=True,
        disallow_transfer_to_peers=True,
    )
    root_llm = ScriptedLlm(script=[Call("transfer_to_agent", agent_name="child")])
    root = Agent(
        name="root",
        model=root_llm,
        global_instruction="Be brief.",
        sub_agents=[child],
        generate_content_config=types.GenerateContentConfig(temperature=0.1),
    )
    runner = await start(root)
    await turn(runner, said("hi"))
    assert root_llm.requests[0].config.temperature == 0.1
    child_instruction = child_llm.requests[0].system_instruction_text
    assert child_instruction.startswith("Static part.\n\nBe brief.\n\nDynamic for child.")
    # The child may not hand back or sideways: no transfer tool at all.
    assert [d.name for d in child_llm.requests[0].function_declarations] == []


class _Artifacts:
    """A stand-in artifact store (the artifact services arrive with their own issue)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        version: int | None = None,
    ) -> types.Part | None:
        text = self.files.get(filename)
        return None if text is None else types.Part(text=text)


async def test_artifact_placeholders_read_the_artifact_service() -> None:
    from cairn import Runner
    from cairn.sessions import InMemorySessionService

    llm = ScriptedLlm(script=["ok"])
    agent = Agent(
        name="a", model=llm, instruction="Policy: {artifact.policy.txt} Extra: {artifact.none.txt?}"
    )
    runner = Runner(
        app_name=APP,
        agent=agent,
        session_service=InMemorySessionService(),
        artifact_service=_Artifacts({"policy.txt": "be kind"}),
        auto_create_session=True,
    )
    await turn(runner, said("x"))  # type: ignore[arg-type]
    assert llm.requests[0].system_instruction_text.startswith("Policy: be kind Extra: ")
