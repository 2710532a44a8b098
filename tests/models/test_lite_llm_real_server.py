"""LiteLlm through litellm against a real inference server: llama-cpp-python's, serving
SmolLM2-135M (tests/support/model_server.py, merged from the server branch). What a tiny
model says varies, so these check the exchange: a reply arrives, streams, a forced tool
call runs and its follow-up is accepted by the server."""

from __future__ import annotations

from typing import Any

from google.genai import types
from tests.support.model_server import ModelServer, model_server  # noqa: F401  (fixture)

from cairn import Agent, InMemoryRunner, RunConfig
from cairn.agents import StreamingMode
from cairn.models import LlmRequest
from cairn.models.lite_llm import LiteLlm


def lite(server: ModelServer) -> LiteLlm:
    return LiteLlm(
        model=server.cairn_model, api_base=server.base_url, api_key="unused", max_tokens=24
    )


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def test_a_reply_and_a_stream_from_the_real_server(model_server: ModelServer) -> None:  # noqa: F811
    llm = lite(model_server)
    request = LlmRequest(contents=[user("Say hello.")])

    [whole] = [r async for r in llm.generate_content_async(request)]
    streamed = [r async for r in llm.generate_content_async(request, stream=True)]

    assert whole.error_code is None and whole.content is not None
    assert whole.usage_metadata is not None and whole.usage_metadata.prompt_token_count
    assert whole.finish_reason is not None
    assert any(r.partial for r in streamed) and not streamed[-1].partial
    assert streamed[-1].content is not None and streamed[-1].content.parts


def get_weather(city: str) -> dict[str, Any]:
    """The weather in a city.

    Args:
        city: the city.
    """
    return {"city": city, "celsius": 21}


async def test_a_forced_tool_call_and_its_follow_up_on_the_real_server(
    model_server: ModelServer,  # noqa: F811
) -> None:
    forced = types.GenerateContentConfig(
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=["get_weather"]
            )
        )
    )
    agent = Agent(
        name="forecaster",
        model=lite(model_server),
        tools=[get_weather],
        generate_content_config=forced,
    )
    runner = InMemoryRunner(agent=agent, app_name="weather")
    await runner.session_service.create_session(app_name="weather", user_id="ada", session_id="s")

    events = [
        e
        async for e in runner.run_async(
            user_id="ada",
            session_id="s",
            new_message=user("Weather in Lyon?"),
            run_config=RunConfig(streaming_mode=StreamingMode.NONE, max_llm_calls=2),
        )
    ]

    calls = [c for e in events for c in e.get_function_calls()]
    results = [r for e in events for r in e.get_function_responses()]
    assert calls and calls[0].name == "get_weather"
    assert results and results[0].response is not None and results[0].response["celsius"] == 21
    # The follow-up (the tool result sent back) was accepted: no error from the server.
    assert not [e.error_message for e in events if e.error_code == "ModelCallError"]
