"""A key a tool deletes from state is gone from the stored session, as in ADK."""

from __future__ import annotations

from google.genai import types

from cairn import Agent, InMemoryRunner, ToolContext
from cairn.testing import Call, ScriptedLlm


def forget(tool_context: ToolContext) -> str:
    """Forget the draft and the scratch note."""
    del tool_context.state["draft"]
    tool_context.state.pop("user:nickname")
    return "forgotten"


async def test_a_tool_deleting_keys_removes_them_from_the_session() -> None:
    llm = ScriptedLlm(script=[Call("forget"), "Done."])
    agent = Agent(name="clerk", model=llm, tools=[forget])
    runner = InMemoryRunner(agent=agent, app_name="app")
    service = runner.session_service
    session = await service.create_session(
        app_name="app", user_id="u", state={"draft": "x", "keep": 1, "user:nickname": "Al"}
    )
    hello = types.Content(role="user", parts=[types.Part(text="Forget it")])
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=hello)
    ]
    deleting = [e for e in events if e.actions.removed_state_keys]
    assert len(deleting) == 1
    assert sorted(deleting[0].actions.removed_state_keys or []) == ["draft", "user:nickname"]
    assert "draft" not in deleting[0].actions.state_delta
    stored = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None and stored.state == {"keep": 1}
    assert await service.get_user_state(app_name="app", user_id="u") == {}
