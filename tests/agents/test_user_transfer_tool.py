"""A user's own tool named ``transfer_to_agent`` is accepted and is the one that runs, as in
ADK (cairn's transfer tool is then not offered)."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn import Agent, InMemoryRunner
from cairn.testing import Call, ScriptedLlm

APP, USER, SESSION = "demo", "u1", "s1"
handed: list[str] = []


def transfer_to_agent(agent_name: str) -> dict[str, str]:
    """Hand the case to a human team."""
    handed.append(agent_name)
    return {"queued_for": agent_name}


async def run(agent: Agent) -> list[Any]:
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    message = types.Content(role="user", parts=[types.Part(text="escalate")])
    return [
        e async for e in runner.run_async(user_id=USER, session_id=SESSION, new_message=message)
    ]


async def test_a_user_tool_named_transfer_to_agent_runs_on_an_agent_without_sub_agents() -> None:
    handed.clear()
    llm = ScriptedLlm(script=[Call("transfer_to_agent", agent_name="billing"), "queued"])
    events = await run(Agent(name="desk", model=llm, tools=[transfer_to_agent]))
    assert [d.name for d in llm.requests[0].function_declarations] == ["transfer_to_agent"]
    assert events[1].get_function_responses()[0].response == {"queued_for": "billing"}
    assert handed == ["billing"] and events[-1].is_final_response()


async def test_with_sub_agents_the_users_tool_replaces_cairns() -> None:
    handed.clear()
    helper = Agent(name="helper", model=ScriptedLlm(script=["helper here"]))
    llm = ScriptedLlm(script=[Call("transfer_to_agent", agent_name="helper"), "queued"])
    events = await run(
        Agent(name="desk", model=llm, tools=[transfer_to_agent], sub_agents=[helper])
    )
    assert [d.name for d in llm.requests[0].function_declarations] == ["transfer_to_agent"]
    assert events[1].get_function_responses()[0].response == {"queued_for": "helper"}
    assert events[1].actions.transfer_to_agent is None
    assert handed == ["helper"] and {e.author for e in events} == {"desk"}
