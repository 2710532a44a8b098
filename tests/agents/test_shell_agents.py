"""SequentialAgent, ParallelAgent and LoopAgent: the events ADK writes, and resume from the log.

The expected streams are the ones google-adk 2.13.0 writes for the same apps (observed with a
scripted model, with and without a resumable App).
"""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn import Agent, Event, LongRunningFunctionTool, Runner
from cairn.agents import LoopAgent, ParallelAgent, SequentialAgent
from cairn.apps.app import App, ResumabilityConfig
from cairn.sessions import InMemorySessionService
from cairn.testing import Call, ScriptedLlm
from cairn.tools import exit_loop

APP, USER, SESSION = "shell", "u1", "s1"


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def answer(call_id: str, result: dict[str, Any]) -> types.Content:
    response = types.FunctionResponse(id=call_id, name="ask_manager", response=result)
    return types.Content(role="user", parts=[types.Part(function_response=response)])


def shape(event: Event) -> tuple[str, str]:
    """An event as (author, what it carries): text, call, result, or ADK's marker."""
    if event.actions.agent_state is not None:
        return event.author, f"state {event.actions.agent_state}"
    if event.content is None:
        return event.author, "end" if event.actions.end_of_agent else "empty"
    part = (event.content.parts or [types.Part()])[0]
    if part.function_call:
        return event.author, f"call {part.function_call.name}"
    if part.function_response:
        return event.author, f"result {part.function_response.name}"
    return event.author, f"{event.content.role}: {part.text}"


class Harness:
    """One session of an app; each ``runner()`` is a fresh Runner on the same store, as a
    process that resumes the session later would build it."""

    def __init__(self, root: Any, *, resumable: bool = False) -> None:
        self.root = root
        self.resumable = resumable
        self.service = InMemorySessionService()

    def runner(self) -> Runner:
        config = ResumabilityConfig(is_resumable=True) if self.resumable else None
        app = App(name=APP, root_agent=self.root, resumability_config=config)
        return Runner(app=app, session_service=self.service)

    async def send(self, message: types.Content) -> list[Event]:
        if await self.service.get_session(app_name=APP, user_id=USER, session_id=SESSION) is None:
            await self.service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
        events = self.runner().run_async(user_id=USER, session_id=SESSION, new_message=message)
        return [event async for event in events]

    async def stored(self) -> list[Event]:
        session = await self.service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
        assert session is not None
        return session.events


def prompt_texts(llm: ScriptedLlm, index: int = -1) -> list[str]:
    return [p.text or "" for c in llm.requests[index].contents for p in c.parts or []]


async def test_sequential_sub_agents_share_the_conversation_with_no_extra_events() -> None:
    writer_llm = ScriptedLlm(script=["A draft."])
    editor_llm = ScriptedLlm(script=["An edit."])
    writer = Agent(name="writer", model=writer_llm, output_key="draft")
    editor = Agent(name="editor", model=editor_llm, instruction="Edit: {draft}")
    app = Harness(SequentialAgent(name="pipeline", sub_agents=[writer, editor]))

    events = await app.send(said("write a poem"))

    assert [shape(e) for e in events] == [
        ("writer", "model: A draft."),
        ("editor", "model: An edit."),
    ]
    assert [e.branch for e in events] == [None, None]
    # The editor sees the whole conversation (the user's message and the writer's turn),
    # not only the writer's output handed over as a new user message.
    seen = prompt_texts(editor_llm)
    assert seen[0] == "write a poem"
    assert any("A draft." in text for text in seen[1:])
    assert "Edit: A draft." in editor_llm.requests[0].system_instruction_text
    assert len(await app.stored()) == 3  # the user's message and the two answers


async def test_a_resumable_app_gets_adks_markers_around_each_sub_agent() -> None:
    writer = Agent(name="writer", model=ScriptedLlm(script=["A draft."]))
    editor = Agent(name="editor", model=ScriptedLlm(script=["An edit."]))
    app = Harness(SequentialAgent(name="pipeline", sub_agents=[writer, editor]), resumable=True)

    events = await app.send(said("write a poem"))

    assert [shape(e) for e in events] == [
        ("pipeline", "state {'current_sub_agent': 'writer'}"),
        ("writer", "model: A draft."),
        ("writer", "end"),
        ("pipeline", "state {'current_sub_agent': 'editor'}"),
        ("editor", "model: An edit."),
        ("editor", "end"),
        ("pipeline", "end"),
    ]


async def test_parallel_sub_agents_work_on_their_own_branches() -> None:
    left = Agent(name="left", model=ScriptedLlm(script=["L."]), output_key="left_said")
    right = Agent(name="right", model=ScriptedLlm(script=["R."]))
    app = Harness(ParallelAgent(name="fan", sub_agents=[left, right]))

    events = await app.send(said("go"))

    assert sorted((e.author, e.branch) for e in events) == [
        ("left", "fan.left"),
        ("right", "fan.right"),
    ]
    assert all(e.content is not None and e.content.role == "model" for e in events)
    session = await app.service.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    assert session is not None and session.state["left_said"] == "L."


async def test_a_resumable_parallel_agent_marks_its_start_and_end() -> None:
    left = Agent(name="left", model=ScriptedLlm(script=["L."]))
    right = Agent(name="right", model=ScriptedLlm(script=["R."]))
    app = Harness(ParallelAgent(name="fan", sub_agents=[left, right]), resumable=True)

    events = await app.send(said("go"))

    assert shape(events[0]) == ("fan", "state {}")
    assert shape(events[-1]) == ("fan", "end")
    assert sorted(shape(e) for e in events[1:-1]) == [
        ("left", "end"),
        ("left", "model: L."),
        ("right", "end"),
        ("right", "model: R."),
    ]


async def test_a_loop_ends_when_a_sub_agent_escalates() -> None:
    critic_llm = ScriptedLlm(script=["Needs work.", Call("exit_loop")])
    writer = Agent(name="writer", model=ScriptedLlm(script=["Draft 1.", "Draft 2."]))
    critic = Agent(name="critic", model=critic_llm, tools=[exit_loop])
    app = Harness(LoopAgent(name="refine", sub_agents=[writer, critic], max_iterations=5))

    events = await app.send(said("write"))

    assert [shape(e) for e in events] == [
        ("writer", "model: Draft 1."),
        ("critic", "model: Needs work."),
        ("writer", "model: Draft 2."),
        ("critic", "call exit_loop"),
        ("critic", "result exit_loop"),
    ]
    assert events[-1].get_function_responses()[0].response == {"result": None}
    # The second round sees the first: the loop's sub-agents share the conversation.
    assert any("Needs work." in text for text in prompt_texts(critic_llm))


async def test_a_resumable_loop_marks_each_round_and_stops_at_max_iterations() -> None:
    writer = Agent(name="writer", model=ScriptedLlm(script=["Draft 1.", "Draft 2."]))
    app = Harness(LoopAgent(name="refine", sub_agents=[writer], max_iterations=2), resumable=True)

    events = await app.send(said("write"))

    assert [shape(e) for e in events] == [
        ("refine", "state {'current_sub_agent': 'writer', 'times_looped': 0}"),
        ("writer", "model: Draft 1."),
        ("writer", "end"),
        ("refine", "state {'current_sub_agent': 'writer', 'times_looped': 1}"),
        ("writer", "model: Draft 2."),
        ("writer", "end"),
        ("refine", "end"),
    ]


def ask_manager(reason: str) -> None:
    """Ask a manager for approval; the answer comes later."""
    return None


def waiting_pipeline() -> tuple[SequentialAgent, dict[str, ScriptedLlm]]:
    llms = {
        "intake": ScriptedLlm(script=["Noted."]),
        "approval": ScriptedLlm(
            script=[Call("ask_manager", id="ask-1", reason="big"), "Approved."]
        ),
        "report": ScriptedLlm(script=["Done."]),
    }
    agents = [
        Agent(name="intake", model=llms["intake"]),
        Agent(
            name="approval",
            model=llms["approval"],
            tools=[LongRunningFunctionTool(ask_manager)],
        ),
        Agent(name="report", model=llms["report"]),
    ]
    return SequentialAgent(name="pipeline", sub_agents=agents), llms


async def test_a_pause_inside_a_sequence_resumes_without_rerunning_what_ran() -> None:
    for resumable in (False, True):
        root, llms = waiting_pipeline()
        app = Harness(root, resumable=resumable)
        paused = await app.send(said("refund 900"))
        assert paused[-1].long_running_tool_ids == {"ask-1"}
        assert not llms["report"].requests  # the sequence waits

        # A new Runner (as another process would build it) gets the answer.
        resumed = await app.send(answer("ask-1", {"approved": True}))

        content = [shape(e) for e in resumed if e.actions.agent_state is None]
        content = [s for s in content if s[1] != "end"]
        assert content == [("approval", "model: Approved."), ("report", "model: Done.")]
        assert len(llms["intake"].requests) == 1  # never run again
        assert len(llms["approval"].requests) == 2  # its call, then its answer
        assert len(llms["report"].requests) == 1
        if resumable:
            assert [shape(e) for e in resumed] == [
                ("approval", "model: Approved."),
                ("approval", "end"),
                ("pipeline", "state {'current_sub_agent': 'report'}"),
                ("report", "model: Done."),
                ("report", "end"),
                ("pipeline", "end"),
            ]


async def test_a_pause_on_one_parallel_branch_reruns_only_that_branch() -> None:
    quick_llm = ScriptedLlm(script=["Quick."])
    slow_llm = ScriptedLlm(script=[Call("ask_manager", id="ask-1", reason="slow"), "Slow."])
    quick = Agent(name="quick", model=quick_llm)
    slow = Agent(name="slow", model=slow_llm, tools=[LongRunningFunctionTool(ask_manager)])
    after_llm = ScriptedLlm(script=["Merged."])
    root = SequentialAgent(
        name="pipeline",
        sub_agents=[
            ParallelAgent(name="fan", sub_agents=[quick, slow]),
            Agent(name="merge", model=after_llm),
        ],
    )
    app = Harness(root)
    await app.send(said("go"))
    assert not after_llm.requests

    resumed = await app.send(answer("ask-1", {"ok": True}))

    assert [(e.author, e.branch) for e in resumed] == [("slow", "fan.slow"), ("merge", None)]
    assert len(quick_llm.requests) == 1


async def test_agents_under_a_shell_agent_are_offered_no_transfer() -> None:
    step_llm = ScriptedLlm(script=["Step done."])
    coordinator_llm = ScriptedLlm(script=[Call("transfer_to_agent", agent_name="pipeline"), "Hi."])
    pipeline = SequentialAgent(
        name="pipeline",
        description="Does the work.",
        sub_agents=[Agent(name="step", model=step_llm)],
    )
    root = Agent(name="coordinator", model=coordinator_llm, sub_agents=[pipeline])
    app = Harness(root)

    events = await app.send(said("do it"))

    assert [shape(e) for e in events] == [
        ("coordinator", "call transfer_to_agent"),
        ("coordinator", "result transfer_to_agent"),
        ("step", "model: Step done."),
    ]
    assert events[1].get_function_responses()[0].response == {"result": None}
    assert not step_llm.requests[0].function_declarations  # no transfer_to_agent in there
    declaration = coordinator_llm.requests[0].function_declarations[0]
    assert declaration.name == "transfer_to_agent"
    assert declaration.parameters_json_schema["properties"]["agent_name"]["enum"] == ["pipeline"]
    # The next message goes to the root: the shell agent's sub-agents do not keep the chat.
    again = await app.send(said("thanks"))
    assert [shape(e) for e in again] == [("coordinator", "model: Hi.")]


async def test_transferring_back_to_the_parent_runs_it_again_not_nested() -> None:
    coordinator_llm = ScriptedLlm(
        script=[Call("transfer_to_agent", agent_name="specialist"), "Back here."]
    )
    specialist_llm = ScriptedLlm(script=[Call("transfer_to_agent", agent_name="coordinator")])
    specialist = Agent(name="specialist", description="Knows things.", model=specialist_llm)
    app = Harness(Agent(name="coordinator", model=coordinator_llm, sub_agents=[specialist]))

    events = await app.send(said("question"))

    assert [shape(e) for e in events] == [
        ("coordinator", "call transfer_to_agent"),
        ("coordinator", "result transfer_to_agent"),
        ("specialist", "call transfer_to_agent"),
        ("specialist", "result transfer_to_agent"),
        ("coordinator", "model: Back here."),
    ]
    enum = specialist_llm.requests[0].function_declarations[0].parameters_json_schema
    assert enum["properties"]["agent_name"]["enum"] == ["coordinator"]
    assert len(await app.stored()) == 6  # as ADK: 1 user message + 5 agent events


async def test_a_before_agent_callback_reply_is_saved_to_output_key() -> None:
    def canned(callback_context: Any) -> types.Content:
        return types.Content(role="model", parts=[types.Part(text="From the callback.")])

    agent = Agent(
        name="answerer",
        model=ScriptedLlm(),
        before_agent_callback=canned,
        output_key="answer",
    )
    app = Harness(agent)

    events = await app.send(said("hello"))

    assert [shape(e) for e in events] == [("answerer", "model: From the callback.")]
    assert events[0].actions.state_delta == {"answer": "From the callback."}


async def test_a_loop_paused_in_its_second_round_resumes_in_that_round() -> None:
    for resumable in (False, True):
        drafts = ScriptedLlm(script=["Draft 1.", "Draft 2.", "Draft 3."])
        checker_llm = ScriptedLlm(
            script=["Fine.", Call("ask_manager", id="ask-2", reason="ok?"), "Approved."]
        )
        writer = Agent(name="writer", model=drafts)
        checker = Agent(
            name="checker", model=checker_llm, tools=[LongRunningFunctionTool(ask_manager)]
        )
        loop = LoopAgent(name="refine", sub_agents=[writer, checker], max_iterations=2)
        app = Harness(loop, resumable=resumable)
        paused = await app.send(said("write"))
        assert paused[-1].long_running_tool_ids == {"ask-2"}

        resumed = await app.send(answer("ask-2", {"ok": True}))

        spoken = [shape(e) for e in resumed if e.content is not None]
        assert spoken == [("checker", "model: Approved.")]  # round 2 was the last round
        assert len(drafts.requests) == 2  # the writer ran once per round, never again


async def test_an_agent_that_handed_over_to_a_paused_sub_agent_is_not_marked_done() -> None:
    worker_llm = ScriptedLlm(script=[Call("ask_manager", id="ask-1", reason="audit"), "Done."])
    worker = Agent(name="worker", model=worker_llm, tools=[LongRunningFunctionTool(ask_manager)])
    loop = LoopAgent(
        name="qa", sub_agents=[SequentialAgent(name="steps", sub_agents=[worker])], max_iterations=1
    )
    root = Agent(
        name="root",
        model=ScriptedLlm(script=[Call("transfer_to_agent", agent_name="qa"), "Bye."]),
        sub_agents=[loop],
    )
    app = Harness(root, resumable=True)
    paused = await app.send(said("audit this"))
    assert paused[-1].long_running_tool_ids == {"ask-1"}
    ended = [e.author for e in await app.stored() if e.actions.end_of_agent]
    assert "root" not in ended  # root's hand-over is still running

    resumed = await app.send(answer("ask-1", {"approved": True}))
    ended = [e.author for e in resumed if e.actions.end_of_agent]
    assert ended == ["worker", "steps", "qa", "root"]  # root is done once its sub-agent is


async def test_include_contents_none_shows_the_current_turn_from_the_agent_before() -> None:
    collector_llm = ScriptedLlm(script=["The city is Lyon."])
    writer_llm = ScriptedLlm(script=["Lyon, where rivers meet."])
    root = SequentialAgent(
        name="tagline",
        sub_agents=[
            Agent(name="collector", model=collector_llm),
            Agent(name="writer", model=writer_llm, include_contents="none"),
        ],
    )
    await Harness(root).send(said("I live in Lyon, write me a tagline"))
    seen = " ".join(prompt_texts(writer_llm, 0))
    assert "The city is Lyon." in seen  # the turn starts at the collector's reply
    assert "I live in Lyon" not in seen  # the earlier user message is history
