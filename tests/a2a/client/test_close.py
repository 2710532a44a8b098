"""``Runner.close()`` closes the HTTP clients remote agents made themselves (as sub-agents and
inside ``AgentTool``s), never one they were given."""

from __future__ import annotations

import httpx
from tests.a2a.client.steps import SESSION, USER, texts, turn
from tests.support.a2a_scripted_server import ScriptedA2aServer
from tests.support.waiting import BOUND_SECONDS

from cairn import Agent, AgentTool, InMemoryRunner
from cairn.agents.remote_a2a_agent import RemoteA2aAgent
from cairn.testing import Call, ScriptedLlm


async def test_the_runner_closes_the_clients_its_remote_agents_made(
    streaming_server: ScriptedA2aServer,
) -> None:
    streaming_server.reset()
    streaming_server.script({"answer": "via tool"}, {"answer": "via transfer"})
    tool_agent = RemoteA2aAgent(name="weather", agent_card=streaming_server.card_url)
    sub_agent = RemoteA2aAgent(name="helper", agent_card=streaming_server.card_url)
    model = ScriptedLlm(
        script=[
            Call("weather", request="Oslo"),
            "ok",
            Call("transfer_to_agent", agent_name="helper"),
        ]
    )
    root = Agent(
        name="desk", model=model, tools=[AgentTool(agent=tool_agent)], sub_agents=[sub_agent]
    )
    runner = InMemoryRunner(agent=root, app_name="app")
    await runner.session_service.create_session(app_name="app", user_id=USER, session_id=SESSION)
    await turn(runner, "weather?")
    assert texts(await turn(runner, "book")) == ["via transfer"]
    made = [tool_agent._own_http, sub_agent._own_http]
    assert all(client is not None and not client.is_closed for client in made)
    await runner.close()
    assert all(client is not None and client.is_closed for client in made)
    assert tool_agent._own_http is None and sub_agent._own_http is None


async def test_a_client_the_agent_was_given_stays_open(streaming_server: ScriptedA2aServer) -> None:
    streaming_server.reset()
    streaming_server.script({"answer": "hi"})
    async with httpx.AsyncClient(timeout=BOUND_SECONDS) as mine:
        agent = RemoteA2aAgent(
            name="helper", agent_card=streaming_server.card_url, httpx_client=mine
        )
        runner = InMemoryRunner(agent=agent, app_name="app")
        await runner.session_service.create_session(
            app_name="app", user_id=USER, session_id=SESSION
        )
        assert texts(await turn(runner, "hello")) == ["hi"]
        await runner.close()
        assert not mine.is_closed and agent._own_http is None
        streaming_server.script({"answer": "again"})
        assert texts(await turn(runner, "more")) == ["again"]  # the agent still works
