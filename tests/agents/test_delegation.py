"""Task and single_turn sub-agents: called by their parent like tools, returning a result."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn import Agent, Event, InMemoryRunner
from cairn.testing import Call, ScriptedLlm

APP, USER, SESSION = "desk", "u1", "s1"


def said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def start(root: Agent) -> InMemoryRunner:
    runner = InMemoryRunner(agent=root, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    return runner


async def turn(runner: InMemoryRunner, text: str) -> list[Event]:
    return [
        e async for e in runner.run_async(user_id=USER, session_id=SESSION, new_message=said(text))
    ]


def texts(contents: list[types.Content]) -> list[Any]:
    return [p.text or p.function_call or p.function_response for c in contents for p in c.parts]


async def test_a_single_turn_agent_answers_its_parents_call() -> None:
    summarizer_llm = ScriptedLlm(script=["Short version."])
    summarizer = Agent(
        name="summarizer", description="Summarizes text.", model=summarizer_llm, mode="single_turn"
    )
    root_llm = ScriptedLlm(
        script=[Call("summarizer", request="Summarize: a long story"), "Here it is: Short version."]
    )
    runner = await start(Agent(name="root", model=root_llm, sub_agents=[summarizer]))
    events = await turn(runner, "summarize my story")

    call_id = events[0].get_function_calls()[0].id
    child = f"summarizer@{call_id}"  # a branch serving the call: private to the child
    assert [(e.author, e.branch) for e in events] == [
        ("root", None),  # the call
        ("root", child),  # the request, on the child's branch
        ("summarizer", child),  # its answer
        ("root", None),  # the result, answering the call
        ("root", None),  # the parent's final answer
    ]
    assert events[3].get_function_responses()[0].response == {"result": "Short version."}
    declaration = next(
        d for d in root_llm.requests[0].function_declarations if d.name == "summarizer"
    )
    assert "request" in declaration.parameters_json_schema["properties"]
    assert all(d.name != "transfer_to_agent" for d in root_llm.requests[0].function_declarations)
    child_saw = texts(summarizer_llm.requests[0].contents)
    assert any("Summarize: a long story" in str(t) for t in child_saw)
    # The parent never saw the child's own turn, only the result.
    assert not any("summarizer] said" in str(t) for t in texts(root_llm.requests[1].contents))


async def test_a_task_agent_talks_to_the_user_then_returns_its_result() -> None:
    booker_llm = ScriptedLlm(
        script=["For how many people?", Call("finish_task", result="table for 4 at 8pm")]
    )
    booker = Agent(name="booker", description="Books tables.", model=booker_llm, mode="task")
    root_llm = ScriptedLlm(
        script=[
            Call("booker", request="book a table at 8pm"),
            "Done: table for 4 at 8pm.",
            "You're welcome.",
        ]
    )
    runner = await start(Agent(name="root", model=root_llm, sub_agents=[booker]))

    first = await turn(runner, "book me a table")
    assert [e.author for e in first] == ["root", "root", "booker"]
    assert first[-1].content.parts[0].text == "For how many people?"  # the parent's call waits

    second = await turn(runner, "4 people")
    assert [e.author for e in second] == ["booker", "booker", "root", "root"]
    assert second[1].actions.end_of_agent
    assert second[2].get_function_responses()[0].response == {"result": "table for 4 at 8pm"}
    assert second[-1].content.parts[0].text == "Done: table for 4 at 8pm."
    # The task agent saw the user's reply; its turns stayed on its branch.
    assert "4 people" in str(texts(booker_llm.requests[1].contents))
    assert {e.branch for e in second[:2]} == {f"booker@{first[0].get_function_calls()[0].id}"}
    assert "finish_task" in [d.name for d in booker_llm.requests[0].function_declarations]

    third = await turn(runner, "thanks")  # back with the root, which held the chat last
    assert [(e.author, e.content.parts[0].text) for e in third] == [("root", "You're welcome.")]
