"""ExampleTool: few-shot examples in the system instruction, as ADK puts them there."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from cairn import Agent, InMemoryRunner
from cairn.examples import BaseExampleProvider, Example
from cairn.examples.example_util import build_example_si, convert_examples_to_text
from cairn.testing import ScriptedLlm
from cairn.tools import ExampleTool


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def model(*parts: types.Part) -> types.Content:
    return types.Content(role="model", parts=list(parts))


ADDING = Example(
    input=user("What is 2 plus 3?"),
    output=[
        model(types.Part(function_call=types.FunctionCall(name="add", args={"a": 2, "b": 3}))),
        types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(name="add", response={"result": 5})
                )
            ],
        ),
        model(types.Part(text="2 plus 3 is 5.")),
    ],
)
GREETING = Example(input=user("hi"), output=[model(types.Part(text="Hello! How can I help?"))])


async def ask(agent_tools: list[Any], text: str) -> Any:
    llm = ScriptedLlm(script=["ok"])
    agent = Agent(name="helper", model=llm, instruction="Be brief.", tools=agent_tools)
    runner = InMemoryRunner(agent=agent, app_name="ex")
    await runner.session_service.create_session(app_name="ex", user_id="u", session_id="s")
    async for _ in runner.run_async(user_id="u", session_id="s", new_message=user(text)):
        pass
    [request] = llm.requests
    return request


def test_examples_as_text_for_a_gemini_model() -> None:
    text = convert_examples_to_text([ADDING, GREETING], "gemini-2.5-flash")
    assert text.startswith("<EXAMPLES>\n") and text.endswith("</EXAMPLES>")
    first = text[text.index("EXAMPLE 1:") : text.index("END OF EXAMPLE 1")]
    assert first.splitlines() == [
        "EXAMPLE 1:",
        "[user]",
        "What is 2 plus 3?",
        "[model]",
        "```",
        "add(a=2, b=3)",
        "```",
        "[user]",
        "```",
        '{"name": "add", "response": {"result": 5}}',
        "```",
        "[model]",
        "2 plus 3 is 5.",
    ]
    assert "EXAMPLE 2:\n[user]\nhi\n[model]\nHello! How can I help?\nEND OF EXAMPLE 2" in text


def test_other_models_get_labelled_fences_and_strings_are_quoted() -> None:
    call = types.FunctionCall(name="greet", args={"name": "Ana", "loud": True})
    example = Example(input=user("greet Ana"), output=[model(types.Part(function_call=call))])
    text = convert_examples_to_text([example], "openai/gpt-4o-mini")
    assert "```tool_code\ngreet(name='Ana', loud=True)\n```" in text
    assert "```tool_outputs" in convert_examples_to_text([ADDING], "claude-sonnet-4-5")


async def test_the_examples_go_into_the_system_instruction_and_nothing_is_declared() -> None:
    request = await ask([ExampleTool([ADDING])], "What is 4 plus 4?")
    instruction = request.system_instruction_text
    assert instruction.startswith("Be brief.\n\n<EXAMPLES>")
    assert convert_examples_to_text([ADDING], request.model) in instruction
    assert request.function_declarations == []


async def test_dicts_are_examples_too() -> None:
    tool = ExampleTool([ADDING.model_dump(mode="json", exclude_none=True)])
    assert tool.examples == [ADDING]
    with pytest.raises(ValueError, match="'input'"):
        ExampleTool([{"question": "?"}])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="BaseExampleProvider"):
        ExampleTool("examples.json")  # type: ignore[arg-type]


class ByKeyword(BaseExampleProvider):
    def __init__(self) -> None:
        self.queries: list[str] = []

    def get_examples(self, query: str) -> list[Example]:
        self.queries.append(query)
        return [ADDING] if "plus" in query else [GREETING]


class AsyncByKeyword(BaseExampleProvider):
    async def get_examples(self, query: str) -> list[Example]:  # type: ignore[override]
        return [GREETING]


async def test_a_provider_picks_examples_for_the_users_message() -> None:
    provider = ByKeyword()
    request = await ask([ExampleTool(provider)], "what is 1 plus 1")
    assert provider.queries == ["what is 1 plus 1"]
    assert "add(a=2, b=3)" in request.system_instruction_text
    request = await ask([ExampleTool(provider)], "hello there")
    assert "Hello! How can I help?" in request.system_instruction_text
    assert "add(" not in request.system_instruction_text
    request = await ask([ExampleTool(AsyncByKeyword())], "hello")
    assert "Hello! How can I help?" in request.system_instruction_text
    assert build_example_si(provider, "2 plus 2", None) == convert_examples_to_text([ADDING], None)


async def test_a_message_without_text_asks_no_provider() -> None:
    provider = ByKeyword()
    llm = ScriptedLlm(script=["ok"])
    agent = Agent(name="helper", model=llm, tools=[ExampleTool(provider)])
    runner = InMemoryRunner(agent=agent, app_name="ex")
    await runner.session_service.create_session(app_name="ex", user_id="u", session_id="s")
    image = types.Content(
        role="user", parts=[types.Part.from_bytes(data=b"\x89PNG", mime_type="image/png")]
    )
    async for _ in runner.run_async(user_id="u", session_id="s", new_message=image):
        pass
    assert provider.queries == []
    assert "<EXAMPLES>" not in llm.requests[0].system_instruction_text
