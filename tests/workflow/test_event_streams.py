"""The events a workflow yields and stores are ADK's: output events, routes, branches,
nesting, markers, errors, resume — with cairn's extra records where a resume needs them."""

from __future__ import annotations

import collections
from typing import Any

import pytest
from google.genai import types

from cairn import Event
from cairn.apps import App, ResumabilityConfig
from cairn.runners import InMemoryRunner, Runner
from cairn.workflow import START, FunctionNode, JoinNode, RequestInput, RetryConfig, Workflow

ran: collections.Counter[str] = collections.Counter()


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def answered(event: Event, value: Any) -> types.Content:
    [call] = event.get_function_calls()
    response = types.FunctionResponse(id=call.id, name=call.name, response=value)
    return types.Content(role="user", parts=[types.Part(function_response=response)])


class Session:
    """One session of a runner, and what each message yielded."""

    def __init__(self, root: Workflow, *, resumable: bool = False) -> None:
        ran.clear()
        if resumable:
            config = ResumabilityConfig(is_resumable=True)
            app = App(name="app", root_agent=root, resumability_config=config)
            self.runner: Runner = InMemoryRunner(app=app)
        else:
            self.runner = InMemoryRunner(node=root)
        self.id = ""

    async def send(self, message: types.Content) -> list[Event]:
        service = self.runner.session_service
        if not self.id:
            created = await service.create_session(app_name=self.runner.app_name, user_id="u")
            self.id = created.id
        stream = self.runner.run_async(user_id="u", session_id=self.id, new_message=message)
        return [event async for event in stream]

    async def stored(self) -> list[Event]:
        service = self.runner.session_service
        session = await service.get_session(
            app_name=self.runner.app_name, user_id="u", session_id=self.id
        )
        assert session is not None
        return session.events


def outputs(events: list[Event]) -> list[tuple[str, str, Any]]:
    return [(e.author, e.node_info.path, e.output) for e in events]


def first(node_input: Any) -> str:
    ran["first"] += 1
    return "A"


def classify(node_input: str) -> Event:
    return Event(output="classified", route="big" if "big" in node_input else "small")


def big(node_input: str) -> str:
    return f"big({node_input})"


def small(node_input: str) -> str:
    return f"small({node_input})"


def left(node_input: str) -> str:
    return f"left({node_input})"


def right(node_input: str) -> str:
    return f"right({node_input})"


def finish(node_input: Any) -> str:
    ran["finish"] += 1
    return f"finish({node_input})"


def received(node_input: Any) -> str:
    return type(node_input).__name__


async def test_a_route_is_on_the_output_event_of_the_node_that_picked_it() -> None:
    workflow = Workflow(name="wf", edges=[(START, classify, {"big": big, "small": small})])
    events = await Session(workflow).send(said("a big one"))
    assert outputs(events) == [
        ("wf", "wf@1/classify@1", "classified"),
        ("wf", "wf@1/big@1", "big(classified)"),
    ]
    assert events[0].actions.route == "big" and events[1].actions.route is None
    assert events[0].node_info.output_for == ["wf@1/classify@1"]
    assert events[1].node_info.output_for == ["wf@1/big@1", "wf@1"]  # terminal: wf's output


async def test_first_nodes_get_the_users_content_and_str_parameters_its_text() -> None:
    def typed(node_input: str) -> str:
        return f"typed({node_input})"

    events = await Session(Workflow(name="wf", edges=[(START, typed, received)])).send(said("go"))
    assert [e.output for e in events] == ["typed(go)", "str"]
    events = await Session(Workflow(name="wf", edges=[(START, received)])).send(said("go"))
    assert events[0].output == "Content"


async def test_fan_out_branches_and_the_join_input() -> None:
    join = JoinNode(name="join")
    workflow = Workflow(name="wf", edges=[(START, first, (left, right), join, finish)])
    events = await Session(workflow).send(said("go"))
    by_path = {e.node_info.path: e for e in events}
    assert list(by_path) == [
        "wf@1/first@1",
        "wf@1/left@1",
        "wf@1/right@1",
        "wf@1/join@1",
        "wf@1/finish@1",
    ]
    assert {p: e.branch for p, e in by_path.items()} == {
        "wf@1/first@1": None,
        "wf@1/left@1": "left@1",  # started together: a branch each
        "wf@1/right@1": "right@1",
        "wf@1/join@1": None,  # where the branches met
        "wf@1/finish@1": None,
    }
    assert by_path["wf@1/join@1"].output == {"left": "left(A)", "right": "right(A)"}
    assert by_path["wf@1/finish@1"].node_info.output_for == ["wf@1/finish@1", "wf@1"]


async def test_a_nested_workflow_starts_from_its_input_and_names_its_output() -> None:
    inner = Workflow(name="inner", edges=[(START, left, right)])
    events = await Session(Workflow(name="outer", edges=[(START, first, inner, finish)])).send(
        said("go")
    )
    assert outputs(events) == [
        ("outer", "outer@1/first@1", "A"),
        ("inner", "outer@1/inner@1/left@1", "left(A)"),  # its input is first's output
        ("inner", "outer@1/inner@1/right@1", "right(left(A))"),
        ("inner", "outer@1/inner@1", None),  # cairn's end marker: the nested run finished
        ("outer", "outer@1/finish@1", "finish(right(left(A)))"),
    ]
    assert events[2].node_info.output_for == ["outer@1/inner@1/right@1", "outer@1/inner@1"]
    assert events[3].actions.end_of_agent and events[3].content is None


async def test_a_terminal_nested_workflows_output_is_also_the_outer_ones() -> None:
    inner = Workflow(name="inner", edges=[(START, left)])
    events = await Session(Workflow(name="outer", edges=[(START, inner)])).send(said("go"))
    assert events[0].node_info.output_for == [
        "outer@1/inner@1/left@1",
        "outer@1/inner@1",
        "outer@1",
    ]


async def test_state_writes_ride_on_the_output_event_and_yielded_events_come_as_they_are() -> None:
    def remember(ctx: Any) -> str:
        ctx.state["k"] = 1
        return "s"

    async def steps(node_input: str):  # type: ignore[no-untyped-def]
        yield Event(state={"g": 1})
        yield "done"

    events = await Session(Workflow(name="wf", edges=[(START, remember, steps)])).send(said("x"))
    assert [(e.node_info.path, e.output, e.actions.state_delta) for e in events] == [
        ("wf@1/remember@1", "s", {"k": 1}),
        ("wf@1/steps@1", None, {"g": 1}),
        ("wf@1/steps@1", "done", {}),
    ]
    assert events[1].node_info.output_for is None


async def test_a_failing_node_writes_its_error_event_and_raises_to_the_caller() -> None:
    def boom(node_input: str) -> str:
        raise ValueError("bad thing")

    inner = Workflow(name="inner", edges=[(START, boom)])
    session = Session(Workflow(name="outer", edges=[(START, first, inner, finish)]))
    events: list[Event] = []
    with pytest.raises(ValueError, match="bad thing"):
        async for event in session.runner.run_async(
            user_id="u",
            session_id=(
                await session.runner.session_service.create_session(
                    app_name=session.runner.app_name, user_id="u"
                )
            ).id,
            new_message=said("go"),
        ):
            events.append(event)
    assert [(e.author, e.node_info.path, e.error_code, e.error_message) for e in events[1:]] == [
        ("inner", "outer@1/inner@1/boom@1", "ValueError", "bad thing")  # once, where it failed
    ]
    assert ran["finish"] == 0


async def test_retry_exceptions_by_name_then_the_output_event() -> None:
    tries = collections.Counter[str]()

    def flaky(node_input: Any) -> str:
        tries["flaky"] += 1
        if tries["flaky"] < 3:
            raise ValueError(f"try {tries['flaky']}")
        return "ok"

    retry = RetryConfig(max_attempts=3, initial_delay=0, jitter=0, exceptions=["ValueError"])
    flaky_node = FunctionNode(func=flaky, retry_config=retry)
    assert flaky_node.name == "flaky"  # named after the function, as ADK's keyword constructor
    events = await Session(Workflow(name="wf", edges=[(START, flaky_node)])).send(said("x"))
    assert [(e.error_code, e.error_message, e.output) for e in events] == [
        ("ValueError", "try 1", None),
        ("ValueError", "try 2", None),
        (None, None, "ok"),
    ]


def quiet(node_input: Any) -> None:
    ran["quiet"] += 1


def ask(node_input: Any) -> RequestInput:
    ran["ask"] += 1
    return RequestInput(message="name?")


async def test_resume_takes_the_answer_as_output_and_never_reruns_finished_nodes() -> None:
    session = Session(Workflow(name="wf", edges=[(START, quiet, ask, finish)]))
    paused = await session.send(said("go"))
    assert [e.node_info.path for e in paused] == ["wf@1/quiet@1", "wf@1/ask@1"]
    assert paused[0].node_info.output_for == ["wf@1/quiet@1"]  # cairn's record of a silent node
    [call] = paused[1].get_function_calls()
    assert call.name == "adk_request_input" and paused[1].long_running_tool_ids == {call.id}
    assert call.args == {
        "interruptId": call.id,
        "payload": None,
        "message": "name?",
        "response_schema": None,
    }
    resumed = await session.send(answered(paused[1], {"name": "Bo"}))
    assert outputs(resumed) == [
        ("wf", "wf@1/ask@1", {"name": "Bo"}),  # the answer as ask's output (cairn records it)
        ("wf", "wf@1/finish@1", "finish({'name': 'Bo'})"),
    ]
    assert resumed[0].node_info.output_for == ["wf@1/ask@1"]
    assert resumed[0].invocation_id == paused[0].invocation_id
    assert ran == {"quiet": 1, "ask": 1, "finish": 1}


async def test_a_resumable_app_gets_markers_and_the_skipped_outputs_again() -> None:
    session = Session(Workflow(name="wf", edges=[(START, first, ask, finish)]), resumable=True)
    paused = await session.send(said("go"))
    assert not any(e.actions.end_of_agent for e in paused)  # waiting: not finished
    resumed = await session.send(answered(paused[-1], {"name": "Bo"}))
    assert [(e.node_info.path, e.output, e.node_info.output_for) for e in resumed] == [
        ("wf@1/first@1", "A", None),  # shown again, recording nothing new
        ("wf@1/ask@1", {"name": "Bo"}, ["wf@1/ask@1"]),
        ("wf@1/finish@1", "finish({'name': 'Bo'})", ["wf@1/finish@1", "wf@1"]),
        ("", None, None),
    ]
    marker = resumed[-1]
    assert marker.author == "wf" and marker.actions.end_of_agent
    assert ran == {"first": 1, "ask": 1, "finish": 1}
    assert (await session.stored())[-1].actions.end_of_agent


async def test_a_nested_pause_resumes_the_nested_run_with_the_answer_as_its_output() -> None:
    inner = Workflow(name="inner", edges=[(START, ask)])
    session = Session(Workflow(name="outer", edges=[(START, first, inner, finish)]))
    paused = await session.send(said("go"))
    assert paused[-1].author == "inner" and paused[-1].node_info.path == "outer@1/inner@1/ask@1"
    resumed = await session.send(answered(paused[-1], {"name": "Bo"}))
    assert outputs(resumed)[-1] == ("outer", "outer@1/finish@1", "finish({'name': 'Bo'})")
    assert ran == {"first": 1, "ask": 1, "finish": 1}


async def test_an_empty_workflow_runs_and_writes_nothing() -> None:
    session = Session(Workflow(name="empty"))
    assert await session.send(said("go")) == []
    assert len(await session.stored()) == 1  # the user's message


def test_runner_takes_a_workflow_as_node_or_as_an_apps_root() -> None:
    workflow = Workflow(name="wf", edges=[(START, first)])
    assert InMemoryRunner(node=workflow).agent is workflow
    assert InMemoryRunner(app=App(name="app", root_agent=workflow)).agent is workflow
    with pytest.raises(ValueError, match="exactly one of"):
        InMemoryRunner(agent=workflow, node=workflow)
    with pytest.raises(TypeError, match=r"Workflow\(name=\.\.\., edges=\[\(START, your_node\)\]\)"):
        InMemoryRunner(node=FunctionNode(func=first))  # type: ignore[arg-type]


async def test_an_agent_nodes_answer_is_its_output_event() -> None:
    from cairn import Agent
    from cairn.testing import ScriptedLlm

    writer = Agent(name="writer", model=ScriptedLlm(script=["a draft"]), instruction="write")
    events = await Session(Workflow(name="wf", edges=[(START, first, writer, finish)])).send(
        said("go")
    )
    answer = next(e for e in events if e.author == "writer")
    assert answer.node_info.path == "wf@1/writer@1" and answer.output == "a draft"
    assert answer.node_info.output_for == ["wf@1/writer@1"]
    assert answer.node_info.message_as_output  # as ADK marks an agent's answer
    assert outputs(events)[-1] == ("wf", "wf@1/finish@1", "finish(a draft)")
    assert [e.author for e in events].count("wf") == 2  # no extra event ends the agent node


def test_an_app_takes_a_workflow_as_root_and_names_the_fix_for_a_single_node() -> None:
    workflow = Workflow(name="wf", edges=[(START, first)])
    config = ResumabilityConfig(is_resumable=True)
    assert App(name="app", root_agent=workflow, resumability_config=config).root_agent is workflow
    with pytest.raises(ValueError, match=r"Wrap the node: Workflow\(name='first'"):
        App(name="app", root_agent=FunctionNode(func=first))
