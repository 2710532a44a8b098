"""ADK's rules for Gemini built-in tools beside function tools and agent transfer, through an
agent run (a scripted model named like a Gemini model: what matters is the request it is sent
and what the agent does with its replies)."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from cairn import Agent, Event, InMemoryRunner, LlmResponse
from cairn.agents.built_in_tools import BuiltInToolCombinationError
from cairn.models import LlmRequest
from cairn.testing import Call, ScriptedLlm
from cairn.tools import AgentTool, VertexAiSearchTool, enterprise_web_search, google_search
from cairn.tools.gemini_built_in_tool import BuiltInToolNotSupportedError
from cairn.tools.google_search_agent_tool import GoogleSearchAgentTool
from cairn.tools.google_search_tool import GoogleSearchTool

APP, USER, SESSION = "rules", "u1", "s1"
DATA_STORE = "projects/p/locations/global/collections/default_collection/dataStores/docs"
GROUNDING = types.GroundingMetadata(
    web_search_queries=["euro 2024 winner"],
    grounding_chunks=[types.GroundingChunk(web=types.GroundingChunkWeb(uri="https://uefa.com"))],
)


def lookup_order(order_id: str) -> dict[str, str]:
    """Look up an order.

    Args:
        order_id: the order's id.
    """
    return {"order_id": order_id, "status": "shipped"}


async def run(agent: Agent, text: str = "Hi") -> list[Event]:
    runner = InMemoryRunner(agent=agent, app_name=APP)
    await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    return [
        event
        async for event in runner.run_async(
            user_id=USER,
            session_id=SESSION,
            new_message=types.Content(role="user", parts=[types.Part(text=text)]),
        )
    ]


def built_ins(request: LlmRequest) -> list[types.Tool]:
    return [
        t
        for t in request.config.tools or []
        if isinstance(t, types.Tool) and not t.function_declarations
    ]


def declared(request: LlmRequest) -> list[str]:
    return [d.name or "" for d in request.function_declarations]


async def test_google_search_alone_goes_in_the_request_as_the_built_in_tool() -> None:
    llm = ScriptedLlm(model="gemini-2.5-flash", script=["Spain."])
    await run(Agent(name="a", model=llm, tools=[google_search]))
    [request] = llm.requests
    assert built_ins(request) == [types.Tool(google_search=types.GoogleSearch())]
    assert declared(request) == []


async def test_without_bypass_google_search_goes_beside_the_functions_in_one_request() -> None:
    # What ADK does too: Gemini 3 takes it; an earlier Gemini answers HTTP 400.
    llm = ScriptedLlm(model="gemini-3-flash-preview", script=["Spain."])
    await run(Agent(name="a", model=llm, tools=[google_search, lookup_order]))
    [request] = llm.requests
    assert built_ins(request) == [types.Tool(google_search=types.GoogleSearch())]
    assert declared(request) == ["lookup_order"]


async def test_bypass_runs_the_search_in_a_sub_agent_whose_grounding_reaches_the_answer() -> None:
    searched = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="Spain won Euro 2024.")]),
        grounding_metadata=GROUNDING,
    )
    llm = ScriptedLlm(
        model="gemini-2.5-flash",
        script=[
            Call("google_search_agent", request="euro 2024 winner"),
            searched,
            "Spain won Euro 2024; your order has shipped.",
        ],
    )
    search = GoogleSearchTool(bypass_multi_tools_limit=True)
    agent = Agent(name="helper", model=llm, tools=[search, lookup_order])
    events = await run(agent, "Who won Euro 2024?")

    caller_first, search_request, caller_last = llm.requests
    # The caller declares the search agent as a function and no built-in tool...
    assert declared(caller_first) == ["google_search_agent", "lookup_order"]
    assert built_ins(caller_first) == []
    # ...and the search agent sends Google Search alone.
    assert built_ins(search_request) == [types.Tool(google_search=types.GoogleSearch())]
    assert declared(search_request) == []
    assert search_request.contents[-1].parts[0].text == "euro 2024 winner"  # type: ignore[index]
    [answer] = [e for e in events if e.author == "helper" and e.is_final_response()]
    assert answer.content is not None and answer.content.parts
    assert answer.content.parts[0].text == "Spain won Euro 2024; your order has shipped."
    assert answer.grounding_metadata == GROUNDING  # the sub-agent's sources, on the answer
    [response] = [r for e in events for r in e.get_function_responses()]
    assert response.response == {"result": "Spain won Euro 2024."}
    assert "temp:_adk_grounding_metadata" not in str(caller_last.contents)


async def test_bypass_alone_in_an_agent_keeps_the_built_in_tool() -> None:
    llm = ScriptedLlm(model="gemini-2.5-flash", script=["Spain."])
    await run(Agent(name="a", model=llm, tools=[GoogleSearchTool(bypass_multi_tools_limit=True)]))
    assert built_ins(llm.requests[0]) == [types.Tool(google_search=types.GoogleSearch())]


def test_google_search_agent_tool_propagates_grounding() -> None:
    tool = GoogleSearchAgentTool(Agent(name="s", model="gemini-2.5-flash", tools=[google_search]))
    assert isinstance(tool, AgentTool) and tool.propagate_grounding_metadata
    assert tool.name == "s"


async def test_vertex_ai_search_bypass_beside_other_tools_says_what_to_use_instead() -> None:
    llm = ScriptedLlm(model="gemini-2.5-flash", script=["unused"])
    tool = VertexAiSearchTool(data_store_id=DATA_STORE, bypass_multi_tools_limit=True)
    with pytest.raises(BuiltInToolCombinationError) as raised:
        await run(Agent(name="hr", model=llm, tools=[tool, lookup_order]))
    message = str(raised.value)
    assert "'hr'" in message and "Discovery Engine" in message and "AgentTool" in message
    assert llm.requests == []


@pytest.mark.parametrize(
    "tool", [google_search, VertexAiSearchTool(data_store_id=DATA_STORE), enterprise_web_search]
)
async def test_search_with_sub_agents_before_gemini_3_is_an_error_naming_the_fix(tool: Any) -> None:
    llm = ScriptedLlm(model="gemini-2.5-flash", script=["unused"])
    child = Agent(name="billing", model=llm, description="Billing questions.")
    with pytest.raises(BuiltInToolCombinationError) as raised:
        await run(Agent(name="front", model=llm, tools=[tool], sub_agents=[child]))
    message = str(raised.value)
    assert "'front'" in message and type(tool).__name__ in message and "Gemini 3" in message
    assert llm.requests == []


async def test_search_with_sub_agents_on_gemini_3_offers_search_and_transfer_together() -> None:
    llm = ScriptedLlm(model="gemini-3-flash-preview", script=["Hello."])
    child = Agent(name="billing", model=llm, description="Billing questions.")
    await run(Agent(name="front", model=llm, tools=[google_search], sub_agents=[child]))
    [request] = llm.requests
    assert built_ins(request) == [types.Tool(google_search=types.GoogleSearch())]
    assert declared(request) == ["transfer_to_agent"]


async def test_bypass_search_with_sub_agents_before_gemini_3_goes_through_a_search_agent() -> None:
    llm = ScriptedLlm(model="gemini-2.5-flash", script=["Hello."])
    child = Agent(name="billing", model=llm, description="Billing questions.")
    search = GoogleSearchTool(bypass_multi_tools_limit=True)
    await run(Agent(name="front", model=llm, tools=[search], sub_agents=[child]))
    [request] = llm.requests
    assert built_ins(request) == []
    assert declared(request) == ["google_search_agent", "transfer_to_agent"]


async def test_a_searching_sub_agent_that_could_only_go_back_is_not_offered_the_transfer() -> None:
    llm = ScriptedLlm(
        model="gemini-2.5-flash",
        script=[Call("transfer_to_agent", agent_name="searcher"), "Spain won."],
    )
    searcher = Agent(name="searcher", model=llm, description="Searches.", tools=[google_search])
    await run(Agent(name="front", model=llm, sub_agents=[searcher]), "Who won Euro 2024?")

    front_request, searcher_request = llm.requests
    assert declared(front_request) == ["transfer_to_agent"]
    # Its only target is its parent: as in ADK, no transfer (function or instruction) then.
    assert built_ins(searcher_request) == [types.Tool(google_search=types.GoogleSearch())]
    assert declared(searcher_request) == []
    assert "transfer_to_agent" not in searcher_request.system_instruction_text


async def test_a_built_in_tool_on_a_non_gemini_model_fails_the_turn_before_the_call() -> None:
    llm = ScriptedLlm(model="anthropic/claude-sonnet-4-6", script=["unused"])
    with pytest.raises(BuiltInToolNotSupportedError):
        await run(Agent(name="a", model=llm, tools=[google_search]))
    assert llm.requests == []
