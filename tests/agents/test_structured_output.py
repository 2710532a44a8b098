"""An agent with both ``output_schema`` and tools answers through ``set_model_response``."""

from __future__ import annotations

import json
from typing import Any

from google.genai import types
from pydantic import BaseModel

from cairn import Agent, Event, InMemoryRunner
from cairn.testing import Call, ScriptedLlm
from cairn.workflow import SequentialAgent

APP, USER, SESSION = "demo", "u1", "s1"


class Weather(BaseModel):
    city: str
    celsius: int
    note: str | None = None


def get_temperature(city: str) -> dict[str, int]:
    """The temperature in a city, in degrees Celsius."""
    return {"celsius": 21}


async def run(agent: Any) -> tuple[list[Event], dict[str, Any]]:
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    message = types.Content(role="user", parts=[types.Part(text="Weather in Paris?")])
    events = [
        e async for e in runner.run_async(user_id=USER, session_id=SESSION, new_message=message)
    ]
    session = await runner.session_service.get_session(
        app_name=APP, user_id=USER, session_id=SESSION
    )
    assert session is not None
    return events, session.state


async def test_the_answer_given_through_set_model_response_is_the_agents_output() -> None:
    forecaster_llm = ScriptedLlm(
        script=[
            Call("get_temperature", city="Paris"),
            Call("set_model_response", city="Paris", celsius=21),
        ]
    )
    reporter_llm = ScriptedLlm(script=["21 degrees in Paris."])
    forecaster = Agent(
        name="forecaster",
        model=forecaster_llm,
        tools=[get_temperature],
        output_schema=Weather,
        output_key="weather",
    )
    reporter = Agent(name="reporter", model=reporter_llm, instruction="Report {weather}.")
    events, state = await run(SequentialAgent(name="pipeline", sub_agents=[forecaster, reporter]))

    # The model is offered set_model_response first, told to answer through it, and is not
    # held to a response schema (it could not call tools then).
    request = forecaster_llm.requests[0]
    assert [d.name for d in request.function_declarations][:2] == [
        "set_model_response",
        "get_temperature",
    ]
    declared = request.function_declarations[0].parameters_json_schema
    assert isinstance(declared, dict) and declared["required"] == ["city", "celsius"]
    assert "set_model_response" in request.system_instruction_text
    assert request.config.response_json_schema is None

    # ADK's events: the call, its response (carrying the answer), then a model event with
    # the answer as JSON text that sets output_key; the next agent reads it.
    own = [e for e in events if e.author == "forecaster"]
    answered = own[3]
    assert answered.get_function_responses()[0].response == {"city": "Paris", "celsius": 21}
    assert answered.actions.set_model_response == {"city": "Paris", "celsius": 21}
    final = own[4]
    assert final.is_final_response() and final.content is not None
    assert final.content.role == "model"
    assert json.loads(final.content.parts[0].text or "") == {"city": "Paris", "celsius": 21}
    assert final.actions.state_delta == {"weather": {"city": "Paris", "celsius": 21}}
    assert len(own) == 5 and len(forecaster_llm.requests) == 2
    assert state["weather"] == {"city": "Paris", "celsius": 21}
    assert "Report {'city': 'Paris', 'celsius': 21}." in (
        reporter_llm.requests[0].system_instruction_text
    )


async def test_an_answer_that_does_not_match_the_schema_goes_back_to_the_model() -> None:
    llm = ScriptedLlm(
        script=[
            Call("set_model_response", city="Paris", celsius="warm"),
            Call("set_model_response", city="Paris", celsius=21),
        ]
    )
    agent = Agent(
        name="forecaster",
        model=llm,
        tools=[get_temperature],
        output_schema=Weather,
        output_key="weather",
    )
    events, state = await run(agent)
    refused = events[1].get_function_responses()[0].response or {}
    assert "celsius" in refused["error"] and "set_model_response again" in refused["error"]
    assert events[1].actions.set_model_response is None
    assert state["weather"] == {"city": "Paris", "celsius": 21}
    assert events[-1].is_final_response()


async def test_without_tools_the_model_is_held_to_the_response_schema() -> None:
    llm = ScriptedLlm(script=['{"city": "Paris", "celsius": 21}'])
    agent = Agent(name="forecaster", model=llm, output_schema=Weather, output_key="weather")
    _, state = await run(agent)
    request = llm.requests[0]
    assert request.function_declarations == []
    assert request.config.response_json_schema == Weather.model_json_schema()
    assert state["weather"] == {"city": "Paris", "celsius": 21}
