"""Agent construction as ADK apps write it: clone, parent_agent, the default model,
static_instruction as Content."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from cairn import Agent, InMemoryRunner, LlmAgent
from cairn.models.google_llm import Gemini
from cairn.testing import ScriptedLlm


def test_sub_agents_get_their_parent_and_a_second_parent_is_refused() -> None:
    helper = Agent(name="helper")
    root = Agent(name="root", sub_agents=[helper])
    assert helper.parent_agent is root and root.parent_agent is None
    with pytest.raises(ValueError, match="'helper' is already a sub-agent of 'root'"):
        Agent(name="other_root", sub_agents=[helper])
    helper.parent_agent = None  # ADK apps detach an agent this way before reusing it
    other = Agent(name="other_root", sub_agents=[helper])
    assert helper.parent_agent is other


def test_clone_copies_the_tree_with_the_update() -> None:
    def shout(text: str) -> str:
        return text.upper()

    leaf = Agent(name="leaf", instruction="leaf")
    original = Agent(name="writer", instruction="Write.", tools=[shout], sub_agents=[leaf])
    copy = original.clone(update={"name": "writer_2", "instruction": "Write twice."})
    assert (copy.name, copy.instruction) == ("writer_2", "Write twice.")
    assert (original.name, original.instruction) == ("writer", "Write.")
    assert copy.tools == [shout] and copy.tools is not original.tools
    [leaf_copy] = copy.sub_agents
    assert leaf_copy is not leaf and leaf_copy.name == "leaf"
    assert leaf_copy.parent_agent is copy and leaf.parent_agent is original
    assert copy.parent_agent is None
    # The copy can go under another parent: it has none of its own.
    Agent(name="team", sub_agents=[copy, original.clone(update={"name": "writer_3"})])


def test_clone_rebinds_the_agents_own_method_callbacks() -> None:
    class Counting(LlmAgent):
        calls: int = 0

        def count(self, callback_context: Any) -> None:
            self.calls += 1

    agent = Counting(name="counting")
    agent.before_agent_callback = agent.count
    copy = agent.clone()
    assert copy.before_agent_callback is not None
    copy.before_agent_callback(None)  # type: ignore[operator, call-arg]
    assert (copy.calls, agent.calls) == (1, 0)


def test_clone_refuses_parent_agent_and_unknown_fields() -> None:
    agent = Agent(name="a")
    with pytest.raises(ValueError, match="Cannot update `parent_agent` field in clone"):
        agent.clone(update={"parent_agent": Agent(name="b")})
    with pytest.raises(
        ValueError, match=r"Cannot update nonexistent fields in LlmAgent.clone\(\): \[.nope.\]"
    ):
        agent.clone(update={"nope": 1})


def test_an_agent_without_a_model_uses_adks_default_unless_an_ancestor_has_one() -> None:
    assert LlmAgent.DEFAULT_MODEL == "gemini-3.5-flash"
    alone = Agent(name="alone")
    model = alone.canonical_model
    assert isinstance(model, Gemini) and model.model == "gemini-3.5-flash"
    child = Agent(name="child")
    Agent(name="root", model="gemini-2.0-flash", sub_agents=[child])
    assert child.canonical_model.model == "gemini-2.0-flash"


def test_set_default_model_changes_the_fallback() -> None:
    scripted = ScriptedLlm(script=["hi"])
    LlmAgent.set_default_model(scripted)
    try:
        assert Agent(name="a").canonical_model is scripted
        with pytest.raises(ValueError, match="needs a model name"):
            LlmAgent.set_default_model("")
    finally:
        LlmAgent.set_default_model(LlmAgent.DEFAULT_MODEL)
    assert Agent(name="a").canonical_model.model == "gemini-3.5-flash"


@pytest.mark.parametrize(
    "static",
    [
        types.Content(role="user", parts=[types.Part(text="You are a poet.")]),
        types.Part(text="You are a poet."),
        ["You are", types.Part(text="a poet.")],
        "You are a poet.",
    ],
)
async def test_static_instruction_as_content_reaches_the_system_instruction(static: Any) -> None:
    llm = ScriptedLlm(script=["A verse."])
    agent = Agent(name="poet", model=llm, static_instruction=static, instruction="Rhyme.")
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="A poem")])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass
    system = llm.requests[0].system_instruction_text
    assert system.startswith(("You are a poet.", "You are\na poet.")) and "Rhyme." in system
