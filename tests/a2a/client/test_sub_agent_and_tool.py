"""A remote agent as an LLM agent's sub-agent (the model transfers to it) and as a tool
(``AgentTool``): what it is sent, what the caller gets back, a pause inside each, and what the
models see of the remote's records (nothing)."""

from __future__ import annotations

import json

from tests.a2a.client.steps import SESSION, USER, answer, records, texts, turn
from tests.support.a2a_scripted_server import ScriptedA2aServer

from cairn import Agent, AgentTool, InMemoryRunner, Runner
from cairn.agents.remote_a2a_agent import RemoteA2aAgent
from cairn.models.llm_request import LlmRequest
from cairn.testing import Call, ScriptedLlm
from cairn.workflow import START, Workflow


async def runner_for(agent: Agent) -> Runner:
    runner = InMemoryRunner(agent=agent, app_name="app")
    await runner.session_service.create_session(app_name="app", user_id=USER, session_id=SESSION)
    return runner


def shown_to_the_model(request: LlmRequest) -> str:
    return json.dumps([c.model_dump(mode="json", exclude_none=True) for c in request.contents])


async def test_a_transfer_hands_the_conversation_to_the_remote(server: ScriptedA2aServer) -> None:
    server.script({"answer": "Booked: {input}"}, {"answer": "Moved to Friday."})
    helper = RemoteA2aAgent(name="helper", agent_card=server.card_url, description="Books trips.")
    model = ScriptedLlm(
        script=[
            Call("transfer_to_agent", agent_name="helper"),
            Call("transfer_to_agent", agent_name="helper"),
        ]
    )
    root = Agent(name="desk", model=model, instruction="Route.", sub_agents=[helper])
    runner = await runner_for(root)
    first = await turn(runner, "a flight to Oslo")
    assert texts(first, "helper")[-1].startswith("Booked: ")
    second = await turn(runner, "make it Friday")
    assert texts(second, "helper") == ["Moved to Friday."]
    one, two = server.received()
    assert "a flight to Oslo" in one["text"]
    assert "For context:" in one["text"] and "transfer_to_agent" in one["text"]
    assert "make it Friday" in two["text"] and "a flight to Oslo" not in two["text"]
    assert two["contextId"] != "" and one["contextId"] == ""
    [reply] = records(first, "reply")
    assert reply.custom_metadata is not None
    assert two["contextId"] == reply.custom_metadata["a2a:context_id"]
    assert len(model.requests) == 2
    for request in model.requests:
        assert "cairn_a2a_" not in shown_to_the_model(request)


async def test_a_remote_pause_after_a_transfer_is_answered_by_the_remote(
    server: ScriptedA2aServer,
) -> None:
    server.script({"ask": "Which date?"}, {"answer": "Booked for {input}."})
    helper = RemoteA2aAgent(name="helper", agent_card=server.card_url)
    model = ScriptedLlm(script=[Call("transfer_to_agent", agent_name="helper")])
    runner = await runner_for(Agent(name="desk", model=model, sub_agents=[helper]))
    await turn(runner, "book a flight")
    [waiting] = await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)
    assert waiting.author == "helper"
    done = await turn(runner, answer(waiting.id, waiting.name, {"result": "May 3"}))
    assert texts(done, "helper") == ["Booked for May 3."]
    assert len(model.requests) == 1  # the answer went to the remote, not to the model


async def test_as_a_tool_the_remote_gets_the_request_and_the_model_its_answer(
    server: ScriptedA2aServer,
) -> None:
    server.script({"answer": "It is 12 degrees in {input}"})
    helper = RemoteA2aAgent(name="weather", agent_card=server.card_url, description="Weather.")
    model = ScriptedLlm(script=[Call("weather", id="w1", request="Oslo"), "Take a coat."])
    runner = await runner_for(Agent(name="desk", model=model, tools=[AgentTool(agent=helper)]))
    events = await turn(runner, "what to wear in Oslo?")
    assert texts(events)[-1] == "Take a coat."
    [sent] = server.received()
    assert sent["text"] == "Oslo"  # the call's request, and nothing else of the conversation
    result = [
        part.function_response
        for content in model.requests[1].contents
        for part in content.parts or []
        if part.function_response is not None
    ]
    assert result[-1].response == {"result": "It is 12 degrees in Oslo"}
    for request in model.requests:
        assert "cairn_a2a_" not in shown_to_the_model(request)


async def test_a_pause_inside_the_tool_is_the_callers_to_answer(server: ScriptedA2aServer) -> None:
    server.script({"ask": "Which city?"}, {"answer": "12 degrees in {input}"})
    helper = RemoteA2aAgent(name="weather", agent_card=server.card_url, description="Weather.")
    model = ScriptedLlm(script=[Call("weather", id="w1", request="here"), "Take a coat."])
    runner = await runner_for(Agent(name="desk", model=model, tools=[AgentTool(agent=helper)]))
    asked = await turn(runner, "what to wear?")
    assert any(e.long_running_tool_ids for e in asked)  # the caller is shown what waits
    [waiting] = await runner.list_pending_interrupts(user_id=USER, session_id=SESSION)
    done = await turn(runner, answer(waiting.id, waiting.name, {"result": "Bergen"}))
    assert texts(done)[-1] == "Take a coat."
    assert server.received()[-1]["text"] == "Bergen"
    result = [
        part.function_response.response
        for content in model.requests[1].contents
        for part in content.parts or []
        if part.function_response is not None
    ]
    assert result[-1] == {"result": "12 degrees in Bergen"}


async def test_as_a_workflow_node_its_answer_is_the_node_output(server: ScriptedA2aServer) -> None:
    server.script({"answer": "twelve degrees"})

    def report(node_input: str) -> str:
        return f"weather: {node_input}"

    helper = RemoteA2aAgent(name="weather", agent_card=server.card_url)
    flow = Workflow(name="flow", edges=[(START, helper, report)])
    runner = InMemoryRunner(agent=flow, app_name="app")
    await runner.session_service.create_session(app_name="app", user_id=USER, session_id=SESSION)
    events = await turn(runner, "Oslo?")
    assert events[-1].output == "weather: twelve degrees"
    assert server.received()[0]["text"] == "Oslo?"
