"""AgentTool: an LLM agent calls another agent as a tool, on scripted models."""

from __future__ import annotations

from typing import Any

from google.genai import types
from pydantic import BaseModel

from cairn import Agent, AgentTool, Event, InMemoryRunner, RunConfig, ToolContext
from cairn.testing import Call, ScriptedLlm

APP, USER, SESSION = "demo", "u1", "s1"


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def start(agent: Agent, state: dict[str, Any] | None = None) -> InMemoryRunner:
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(
        app_name=APP, user_id=USER, session_id=SESSION, state=state
    )
    return runner


async def turn(runner: InMemoryRunner, text: str, **kwargs: Any) -> list[Event]:
    return [
        e
        async for e in runner.run_async(
            user_id=USER, session_id=SESSION, new_message=said(text), **kwargs
        )
    ]


async def stored_state(runner: InMemoryRunner) -> dict[str, Any]:
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session is not None
    return session.state


def remember(note: str, tool_context: ToolContext) -> str:
    """Write a note into state."""
    tool_context.state["note"] = note
    tool_context.state["user:notes"] = tool_context.state.get("user:notes", 0) + 1
    tool_context.state["temp:scratch"] = "child only"
    return "noted"


async def test_the_child_answers_and_its_state_reaches_the_parent_session() -> None:
    child_llm = ScriptedLlm(script=[Call("remember", note="buy milk"), "Noted: buy milk."])
    child = Agent(
        name="note_taker",
        description="Takes notes.",
        model=child_llm,
        instruction="Topic: {topic}.",
        tools=[remember],
        output_key="child_answer",
    )
    parent_llm = ScriptedLlm(script=[Call("note_taker", request="remember milk"), "Done."])
    parent = Agent(name="boss", model=parent_llm, tools=[AgentTool(child)])
    runner = await start(parent, state={"topic": "shopping", "user:notes": 2})

    events = await turn(runner, "please remember milk")
    call = events[0]
    assert call.get_function_calls()[0].name == "note_taker"
    call_id = call.get_function_calls()[0].id
    [response] = [e for e in events if e.get_function_responses() and e.author == "boss"]
    assert response.get_function_responses()[0].response == {"result": "Noted: buy milk."}
    assert events[-1].content.parts[0].text == "Done."
    # As in ADK, the caller is given the call, its answer and the reply, not the child's work.
    assert [e.author for e in events] == ["boss", "boss", "boss"]
    # The child works on a branch of its own, inside the caller's invocation; its events are
    # committed to the session (so a pause could resume), and so is the state it writes.
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session is not None
    child_events = [e for e in session.events if e.branch == f"note_taker@{call_id}"]
    assert [e.author for e in child_events] == ["boss", "note_taker", "note_taker", "note_taker"]
    assert await stored_state(runner) == {
        "topic": "shopping",
        "user:notes": 3,
        "note": "buy milk",
        "child_answer": "Noted: buy milk.",
    }

    # The parent's model saw the child's answer as the function response, and none of the
    # child's own work.
    second = parent_llm.requests[1]
    sent = second.contents[-1].parts[0].function_response
    assert sent.name == "note_taker" and sent.response == {"result": "Noted: buy milk."}
    assert len(second.contents) == 3  # the user's message, the call, its result
    # The declaration: the agent's name and description, one string parameter.
    declaration = parent_llm.requests[0].function_declarations[0]
    assert declaration.name == "note_taker" and declaration.description == "Takes notes."
    assert declaration.parameters_json_schema == {
        "type": "object",
        "properties": {"request": {"type": "string"}},
        "required": ["request"],
    }
    # The child saw the parent's state (its instruction) and the request as its user message,
    # and nothing of the parent's conversation.
    first_child = child_llm.requests[0]
    assert first_child.system_instruction_text.startswith("Topic: shopping.")
    assert [c.parts[0].text for c in first_child.contents] == ["remember milk"]


async def test_skip_summarization_ends_the_turn_with_the_result() -> None:
    child = Agent(name="echo", model=ScriptedLlm(script=["ECHO"]))
    parent_llm = ScriptedLlm(script=[Call("echo", request="hi")])  # one reply only
    parent = Agent(name="boss", model=parent_llm, tools=[AgentTool(child, skip_summarization=True)])
    runner = await start(parent)

    events = await turn(runner, "say hi")
    assert len(parent_llm.requests) == 1
    assert [e.author for e in events] == ["boss", "boss"]
    response = events[-1]
    assert response.actions.skip_summarization is True
    assert response.is_final_response()
    assert response.get_function_responses()[0].response == {"result": "ECHO"}


class Question(BaseModel):
    city: str
    days: int = 1


class Forecast(BaseModel):
    city: str
    celsius: int
    note: str | None = None


async def test_input_and_output_schemas() -> None:
    child_llm = ScriptedLlm(script=['{"city": "Lisbon", "celsius": 19}'])
    child = Agent(
        name="forecaster",
        description="Forecasts weather.",
        model=child_llm,
        input_schema=Question,
        output_schema=Forecast,
    )
    parent_llm = ScriptedLlm(
        script=[Call("forecaster", days="many"), Call("forecaster", city="Lisbon"), "19°C."]
    )
    parent = Agent(name="boss", model=parent_llm, tools=[AgentTool(child)])
    runner = await start(parent)

    events = await turn(runner, "weather in Lisbon?")
    bad, good = (
        e.get_function_responses()[0].response
        for e in events
        if e.author == "boss" and e.get_function_responses()
    )
    assert "invalid arguments for agent tool 'forecaster'" in bad["error"]
    assert good == {"city": "Lisbon", "celsius": 19}
    declaration = parent_llm.requests[0].function_declarations[0]
    schema = declaration.parameters_json_schema
    assert schema["properties"].keys() == {"city", "days"} and schema["required"] == ["city"]
    assert child_llm.requests[0].contents[0].parts[0].text == '{"city":"Lisbon","days":1}'


async def test_a_failing_child_model_comes_back_as_an_error() -> None:
    child = Agent(name="flaky", model=ScriptedLlm(script=[RuntimeError("provider down")]))
    parent_llm = ScriptedLlm(script=[Call("flaky", request="x"), "It failed."])
    runner = await start(Agent(name="boss", model=parent_llm, tools=[AgentTool(child)]))

    events = await turn(runner, "go")
    [error] = [
        e.get_function_responses()[0].response["error"]
        for e in events
        if e.author == "boss" and e.get_function_responses()
    ]
    assert "flaky" in error and "provider down" in error


async def test_child_model_calls_count_towards_the_callers_limit() -> None:
    child = Agent(name="chatty", model=ScriptedLlm(script=["one"]))
    parent_llm = ScriptedLlm(script=[Call("chatty", request="x"), "never reached"])
    runner = await start(Agent(name="boss", model=parent_llm, tools=[AgentTool(child)]))

    events = await turn(runner, "go", run_config=RunConfig(max_llm_calls=2))
    [answer] = [e for e in events if e.author == "boss" and e.get_function_responses()]
    assert answer.get_function_responses()[0].response == {"result": "one"}
    assert events[-1].error_code == "MAX_LLM_CALLS_EXCEEDED"
    assert len(parent_llm.requests) == 1
