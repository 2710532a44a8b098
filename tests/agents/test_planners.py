"""Planners (`LlmAgent.planner`): ADK's BuiltInPlanner and PlanReActPlanner, and thoughts
kept in the log but never taken for the answer."""

from __future__ import annotations

import io
import warnings
from typing import Any

import pytest
from google.genai import types
from rich.console import Console

from cairn import Agent, Event, InMemoryRunner, LlmResponse, RunConfig
from cairn.agents import StreamingMode
from cairn.cli._render import EventPrinter
from cairn.planners import BasePlanner, BuiltInPlanner, PlanReActPlanner
from cairn.planners.plan_re_act_planner import (
    ACTION_TAG,
    FINAL_ANSWER_TAG,
    PLANNING_TAG,
    REASONING_TAG,
    REPLANNING_TAG,
)
from cairn.testing import Call, ScriptedLlm, Stream

APP, USER, SESSION = "plans", "u", "s"
PLANNED = f"{PLANNING_TAG}\n1. look it up\n{REASONING_TAG}\nit says 4\n{FINAL_ANSWER_TAG}\nIt is 4."


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run(agent: Any, *texts: str, **kwargs: Any) -> tuple[list[Event], InMemoryRunner]:
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    events: list[Event] = []
    for text in texts:
        async for event in runner.run_async(
            user_id=USER, session_id=SESSION, new_message=said(text), **kwargs
        ):
            events.append(event)
    return events, runner


def answer_text(event: Event) -> str:
    parts = event.content.parts if event.content and event.content.parts else []
    return "".join(p.text or "" for p in parts if not p.thought)


# -- BuiltInPlanner ------------------------------------------------------------------------
async def test_built_in_planner_sends_its_thinking_config_over_the_agents() -> None:
    model = ScriptedLlm(script=["ok"])
    planner = BuiltInPlanner(thinking_config=types.ThinkingConfig(thinking_budget=256))
    with pytest.warns(UserWarning, match="the planner's is sent"):
        agent = Agent(
            name="thinker",
            model=model,
            planner=planner,
            generate_content_config=types.GenerateContentConfig(
                temperature=0.1, thinking_config=types.ThinkingConfig(thinking_budget=8)
            ),
        )
    await run(agent, "hi")
    config = model.requests[0].config
    assert config.thinking_config == types.ThinkingConfig(thinking_budget=256)
    assert config.temperature == 0.1
    assert agent.generate_content_config is not None
    assert agent.generate_content_config.thinking_config == types.ThinkingConfig(thinking_budget=8)


async def test_built_in_planner_adds_no_instruction_and_keeps_thoughts_in_history() -> None:
    thought = types.Part(text="the user greets me", thought=True, thought_signature=b"sig")
    reply = types.Content(role="model", parts=[thought, types.Part(text="Hello!")])
    model = ScriptedLlm(script=[reply, "Bye!"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one thinking config: no warning
        agent = Agent(
            name="thinker",
            model=model,
            instruction="Be brief.",
            planner=BuiltInPlanner(thinking_config=types.ThinkingConfig(include_thoughts=True)),
            output_key="said",
        )
    events, runner = await run(agent, "hi", "bye")
    assert model.requests[0].system_instruction_text == "Be brief."
    first = events[0]
    assert first.is_final_response() and answer_text(first) == "Hello!"
    assert first.content is not None and first.content.parts is not None
    assert first.content.parts[0].thought and first.content.parts[0].thought_signature == b"sig"
    # The model gets its signed thought back, as ADK sends it (a Gemini model wants it).
    model_turn = model.requests[1].contents[1]
    assert model_turn.parts is not None and model_turn.parts[0].thought is True
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session is not None and session.state["said"] == "Bye!"


async def test_an_event_of_thoughts_only_is_left_out_of_the_next_prompt() -> None:
    only_thought = types.Content(
        role="model", parts=[types.Part(text="thinking hard", thought=True)]
    )
    model = ScriptedLlm(script=[only_thought, "Answer."])
    agent = Agent(
        name="thinker",
        model=model,
        planner=BuiltInPlanner(thinking_config=types.ThinkingConfig(include_thoughts=True)),
        output_key="said",
    )
    events, runner = await run(agent, "one", "two")
    assert events[0].content is not None  # kept in the log
    assert [c.role for c in model.requests[1].contents] == ["user", "user"]
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session is not None and session.state["said"] == "Answer."


# -- PlanReActPlanner ----------------------------------------------------------------------
async def test_plan_re_act_adds_an_instruction_with_every_tag() -> None:
    model = ScriptedLlm(script=["fine"])
    await run(
        Agent(name="planner", model=model, instruction="Mine.", planner=PlanReActPlanner()), "q"
    )
    instruction = model.requests[0].system_instruction_text
    assert instruction.startswith("Mine.\n\n")
    for tag in (PLANNING_TAG, REPLANNING_TAG, REASONING_TAG, ACTION_TAG, FINAL_ANSWER_TAG):
        assert tag in instruction


async def test_plan_and_reasoning_are_thoughts_and_the_final_answer_is_the_answer() -> None:
    model = ScriptedLlm(script=[PLANNED, "again"])
    agent = Agent(name="planner", model=model, planner=PlanReActPlanner(), output_key="answer")
    events, runner = await run(agent, "2+2?", "and again?")
    [first, second] = events
    assert first.content is not None and first.content.parts is not None
    parts = first.content.parts
    assert [bool(p.thought) for p in parts] == [True, False]
    assert parts[0].text == "\n1. look it up\n\nit says 4\n"  # the tags are gone
    assert parts[1].text == "\nIt is 4."
    assert first.is_final_response() and answer_text(first) == "\nIt is 4."
    # The next prompt has the earlier plan as plain text (ADK clears the thought marks).
    history = model.requests[1].contents[1]
    assert history.parts is not None
    assert [p.thought for p in history.parts] == [None, None]
    assert [p.text for p in history.parts] == [parts[0].text, parts[1].text]
    # ... while the stored event keeps them.
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session is not None
    stored = session.events[1]
    assert stored.content is not None and stored.content.parts is not None
    assert stored.content.parts[0].thought is True
    assert session.state["answer"] == "again"
    assert second.content is not None


async def test_a_tool_turn_keeps_its_calls_and_drops_what_follows_them() -> None:
    def lookup(query: str) -> dict[str, str]:
        """Look something up."""
        return {"found": "4"}

    plan = types.Part(text=f"{PLANNING_TAG} 1. lookup\n{ACTION_TAG}")
    calls = [
        types.Part(function_call=types.FunctionCall(id="c1", name="lookup", args={"query": "a"})),
        types.Part(function_call=types.FunctionCall(id="c2", name="lookup", args={"query": "b"})),
    ]
    nameless = types.Part(function_call=types.FunctionCall(id="c0", name="", args={}))
    later = types.Part(text="this comes after the calls")
    reply = types.Content(role="model", parts=[plan, nameless, *calls, later])
    model = ScriptedLlm(script=[reply, f"{FINAL_ANSWER_TAG}4"])
    agent = Agent(name="planner", model=model, planner=PlanReActPlanner(), tools=[lookup])
    events, _ = await run(agent, "q")
    call_event = events[0]
    assert call_event.content is not None and call_event.content.parts is not None
    kept = call_event.content.parts
    assert kept[0].thought is True and kept[0].text == " 1. lookup\n"
    assert [p.function_call.id for p in kept[1:] if p.function_call] == ["c1", "c2"]
    assert len(kept) == 3
    assert events[-1].is_final_response() and answer_text(events[-1]) == "4"


async def test_text_without_tags_is_left_as_it_is() -> None:
    model = ScriptedLlm(script=["Just an answer."])
    events, _ = await run(Agent(name="planner", model=model, planner=PlanReActPlanner()), "q")
    assert events[0].content is not None and events[0].content.parts is not None
    assert [p.thought for p in events[0].content.parts] == [None]


async def test_streamed_planning_text_streams_as_thought_never_as_answer() -> None:
    chunks = [
        f"{PLANNING_TAG} 1. ",
        "think",
        f" {FINAL_ANSWER_TAG[:5]}",
        f"{FINAL_ANSWER_TAG[5:]} It",
        " is 4.",
    ]
    model = ScriptedLlm(script=[Stream(chunks)])
    agent = Agent(name="planner", model=model, planner=PlanReActPlanner())
    events, _ = await run(agent, "q", run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    partial = [e for e in events if e.partial]
    assert partial
    shown = "".join(answer_text(e) for e in partial)
    assert shown == " It is 4."
    thoughts = "".join(
        p.text or ""
        for e in partial
        for p in (e.content.parts if e.content else None) or []
        if p.thought
    )
    assert thoughts.startswith(" 1. think")
    final = events[-1]
    assert not final.partial and answer_text(final) == " It is 4."


async def test_a_planner_of_ones_own_may_write_state_on_the_reply() -> None:
    class Counting(BasePlanner):
        def build_planning_instruction(self, readonly_context: Any, llm_request: Any) -> str:
            return f"Plan for {readonly_context.agent_name}."

        def process_planning_response(self, callback_context: Any, response_parts: Any) -> Any:
            callback_context.state["replies"] = callback_context.state.get("replies", 0) + 1
            return [types.Part(text=(p.text or "").upper()) for p in response_parts]

    model = ScriptedLlm(script=["quiet"])
    events, _ = await run(Agent(name="mine", model=model, planner=Counting()), "q")
    assert model.requests[0].system_instruction_text.endswith("Plan for mine.")
    assert answer_text(events[0]) == "QUIET"
    assert events[0].actions.state_delta == {"replies": 1}


async def test_a_before_model_callbacks_reply_is_planned_too() -> None:
    def canned(callback_context: Any, llm_request: Any) -> LlmResponse:
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=PLANNED)]))

    agent = Agent(
        name="planner",
        model=ScriptedLlm(),
        planner=PlanReActPlanner(),
        before_model_callback=canned,
    )
    events, _ = await run(agent, "q")
    assert answer_text(events[0]) == "\nIt is 4."


def test_the_cli_shows_a_thought_as_thinking_not_as_the_answer() -> None:
    out = io.StringIO()
    printer = EventPrinter(Console(file=out, width=200, color_system=None))
    printer.show(
        Event(
            author="planner",
            content=types.Content(
                role="model",
                parts=[types.Part(text="my plan", thought=True), types.Part(text="It is 4.")],
            ),
        )
    )
    assert out.getvalue().splitlines() == ["planner (thinking): my plan", "planner: It is 4."]


async def test_calls_are_run_after_a_planned_turn() -> None:
    seen: list[str] = []

    def note(text: str) -> str:
        """Note it."""
        seen.append(text)
        return "noted"

    model = ScriptedLlm(script=[Call("note", text="x"), f"{REASONING_TAG}done{FINAL_ANSWER_TAG}ok"])
    events, _ = await run(
        Agent(name="p", model=model, planner=PlanReActPlanner(), tools=[note]), "q"
    )
    assert seen == ["x"] and answer_text(events[-1]) == "ok"
