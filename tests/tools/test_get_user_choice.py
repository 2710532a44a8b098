"""get_user_choice: the call pauses the run until the user's choice comes back, on any runner."""

from __future__ import annotations

from pathlib import Path

from google.genai import types

from cairn import Agent, Runner
from cairn.sessions import SqliteSessionService
from cairn.testing import Call, ScriptedLlm
from cairn.tools import LongRunningFunctionTool, get_user_choice
from cairn.tools.get_user_choice_tool import get_user_choice_tool

APP, USER, SESSION = "shop", "u1", "s1"


def message(*parts: types.Part) -> types.Content:
    return types.Content(role="user", parts=list(parts))


def test_it_is_adks_long_running_tool() -> None:
    assert get_user_choice is get_user_choice_tool
    assert isinstance(get_user_choice, LongRunningFunctionTool)
    assert get_user_choice.is_long_running and get_user_choice.name == "get_user_choice"
    declaration = get_user_choice.declaration()
    schema = declaration.parameters_json_schema
    assert schema is not None and schema["required"] == ["options"]
    assert schema["properties"]["options"] == {
        "items": {"type": "string"},
        "title": "Options",
        "type": "array",
    }
    assert declaration.description is not None
    assert declaration.description.startswith("Provides the options to the user")


async def test_the_run_waits_for_the_choice_and_another_runner_resumes_it(
    tmp_path: Path,
) -> None:
    store = str(tmp_path / "sessions.db")
    llm = ScriptedLlm(
        script=[
            Call("get_user_choice", id="fc-1", options=["tea", "coffee"]),
            "One coffee, coming up.",
        ]
    )
    agent = Agent(name="barista", model=llm, tools=[get_user_choice])

    first = Runner(app_name=APP, agent=agent, session_service=SqliteSessionService(store))
    await first.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    paused = [
        e
        async for e in first.run_async(
            user_id=USER, session_id=SESSION, new_message=message(types.Part(text="a drink"))
        )
    ]
    [call_event] = paused  # no response: the run stops and waits
    assert call_event.long_running_tool_ids == {"fc-1"}
    assert call_event.get_function_calls()[0].args == {"options": ["tea", "coffee"]}
    await first.close()

    second = Runner(app_name=APP, agent=agent, session_service=SqliteSessionService(store))
    choice = types.FunctionResponse(
        id="fc-1", name="get_user_choice", response={"result": "coffee"}
    )
    resumed = [
        e
        async for e in second.run_async(
            user_id=USER,
            session_id=SESSION,
            new_message=message(types.Part(function_response=choice)),
        )
    ]
    assert resumed[-1].content is not None and resumed[-1].content.parts is not None
    assert resumed[-1].content.parts[0].text == "One coffee, coming up."
    sent = llm.requests[-1].contents[-1].parts
    assert sent is not None and sent[0].function_response is not None
    assert sent[0].function_response.response == {"result": "coffee"}
    await second.close()
