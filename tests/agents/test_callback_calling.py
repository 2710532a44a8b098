"""How an LLM agent calls its model and tool callbacks, as ADK apps write them."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn import Agent, InMemoryRunner, LlmResponse
from cairn.agents import CallbackHook
from cairn.testing import Call, ScriptedLlm


async def run(agent: Agent) -> list[Any]:
    runner = InMemoryRunner(agent=agent, app_name="app")
    await runner.session_service.create_session(app_name="app", user_id="u", session_id="s")
    message = types.Content(role="user", parts=[types.Part(text="go")])
    return [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]


def echo(text: str) -> dict[str, str]:
    return {"echo": text}


async def test_callbacks_with_their_own_parameter_names_get_the_arguments_by_position() -> None:
    seen: list[Any] = []
    agent = Agent(
        name="a",
        model=ScriptedLlm(script=[Call("echo", text="hi"), "done"]),
        tools=[echo],
        before_tool_callback=lambda t, a, c: seen.append(("before", t.name, a)),
        after_tool_callback=lambda t, a, c, r: seen.append(("after", r)),
        after_model_callback=lambda ctx, resp: None,
    )
    events = await run(agent)
    assert events[-1].content.parts[0].text == "done"
    assert seen == [("before", "echo", {"text": "hi"}), ("after", {"echo": "hi"})]


async def test_a_call_of_an_unknown_tool_reaches_on_tool_error_callback() -> None:
    errors: list[Exception] = []

    def recover(tool: Any, args: dict[str, Any], tool_context: Any, error: Exception) -> Any:
        errors.append(error)
        return {"result": f"no {tool.name}"}

    agent = Agent(
        name="a",
        model=ScriptedLlm(script=[Call("nope", x=1), "done"]),
        tools=[echo],
        on_tool_error_callback=recover,
    )
    events = await run(agent)
    assert events[1].get_function_responses()[0].response == {"result": "no nope"}
    assert isinstance(errors[0], ValueError) and "nope" in str(errors[0])


async def test_an_unknown_tool_without_a_recovery_gets_the_list_of_tools() -> None:
    agent = Agent(
        name="a",
        model=ScriptedLlm(script=[Call("nope"), "done"]),
        tools=[echo],
        on_tool_error_callback=lambda **kwargs: None,
    )
    events = await run(agent)
    answer = events[1].get_function_responses()[0].response
    assert "nope" in answer["error"] and "echo" in answer["error"]


async def test_callback_info_names_the_running_hook_only_while_it_runs() -> None:
    seen: list[Any] = []
    contexts: list[Any] = []

    def tool(tool_context: Any) -> str:
        seen.append(tool_context.callback_info)
        return "ok"

    def before_model(callback_context: Any, llm_request: Any) -> None:
        seen.append(callback_context.callback_info.hook)
        contexts.append(callback_context)

    def before_tool(tool: Any, args: Any, tool_context: Any) -> None:
        seen.append(tool_context.callback_info.hook)
        contexts.append(tool_context)

    def after_tool(tool: Any, args: Any, tool_context: Any, tool_response: Any) -> None:
        seen.append(tool_context.callback_info.hook)

    agent = Agent(
        name="a",
        model=ScriptedLlm(script=[Call("tool"), "done"]),
        tools=[tool],
        before_model_callback=before_model,
        before_tool_callback=before_tool,
        after_tool_callback=after_tool,
    )
    await run(agent)
    assert seen == [
        CallbackHook.BEFORE_MODEL,
        CallbackHook.BEFORE_TOOL,
        None,
        CallbackHook.AFTER_TOOL,
        CallbackHook.BEFORE_MODEL,
    ]
    assert all(c.callback_info is None for c in contexts)


async def test_on_model_error_callback_gets_the_error_and_answers_for_the_model() -> None:
    class Broken(ScriptedLlm):
        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            raise SystemError("down")
            yield  # an async generator

    def recover(ctx: Any, request: Any, error: Exception) -> LlmResponse:
        assert ctx.callback_info.hook == CallbackHook.ON_MODEL_ERROR
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=f"sorry: {error}")])
        )

    events = await run(Agent(name="a", model=Broken(script=[]), on_model_error_callback=recover))
    assert events[-1].content.parts[0].text == "sorry: down"
