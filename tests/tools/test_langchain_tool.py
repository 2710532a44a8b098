"""LangchainTool with real langchain-core tools, driven by an agent on a scripted model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from langchain_core.tools import BaseTool, StructuredTool, Tool, tool
from pydantic import BaseModel, Field

from cairn import Agent, Event, InMemoryRunner
from cairn.testing import Call, ScriptedLlm
from cairn.tools import FunctionTool
from cairn.tools.langchain_tool import LangchainTool

ROOT = Path(__file__).resolve().parents[2]


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


class SearchInput(BaseModel):
    query: str = Field(description="what to look for")
    limit: int = 3


class SearchNotes(BaseTool):
    name: str = "search_notes"
    description: str = "Search the user's notes."
    args_schema: type[BaseModel] = SearchInput
    return_direct: bool = True

    def _run(self, query: str, limit: int = 3, run_manager: Any = None) -> str:
        return f"{limit} notes about {query}"


async def shout(text: str) -> str:
    """Say a text loudly."""
    return text.upper() + "!"


async def run(tools: list[Any], script: list[Any]) -> tuple[list[Event], ScriptedLlm]:
    llm = ScriptedLlm(script=script)
    runner = InMemoryRunner(agent=Agent(name="helper", model=llm, tools=tools), app_name="lc")
    await runner.session_service.create_session(app_name="lc", user_id="u", session_id="s")
    message = types.Content(role="user", parts=[types.Part(text="go")])
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]
    return events, llm


def responses(events: list[Event]) -> list[Any]:
    return [r.response for e in events for r in e.get_function_responses()]


def test_declared_with_the_tools_own_schema() -> None:
    wrapped = LangchainTool(multiply)
    assert isinstance(wrapped, FunctionTool)
    declaration = wrapped.declaration()
    assert declaration.name == "multiply"
    assert declaration.description == "Multiply two integers."
    assert declaration.parameters_json_schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }
    search = LangchainTool(SearchNotes(), name="notes", description="Look in the notes.")
    declared = search.declaration()
    assert (declared.name, declared.description) == ("notes", "Look in the notes.")
    assert declared.parameters_json_schema is not None
    properties = declared.parameters_json_schema["properties"]
    assert properties["query"]["description"] == "what to look for"
    assert "run_manager" not in properties and properties["limit"]["default"] == 3


async def test_an_agent_calls_langchain_tools() -> None:
    async_tool = StructuredTool.from_function(coroutine=shout)
    events, llm = await run(
        [LangchainTool(multiply), LangchainTool(async_tool)],
        [[Call("multiply", a=6, b=7), Call("shout", text="hey")], "42, HEY!"],
    )
    assert responses(events) == [{"result": 42}, {"result": "HEY!"}]
    assert [d.name for d in llm.requests[0].function_declarations] == ["multiply", "shout"]
    assert events[-1].content is not None and events[-1].content.parts is not None
    assert events[-1].content.parts[0].text == "42, HEY!"


async def test_wrong_arguments_come_back_to_the_model_to_fix() -> None:
    events, llm = await run(
        [LangchainTool(multiply)],
        [Call("multiply", a=6), Call("multiply", a=6, b=2), "12"],
    )
    first, second = responses(events)
    assert "invalid arguments for tool 'multiply'" in first["error"] and "b:" in first["error"]
    assert second == {"result": 12}
    assert len(llm.requests) == 3


async def test_return_direct_ends_the_turn_with_the_result() -> None:
    events, llm = await run([LangchainTool(SearchNotes())], [Call("search_notes", query="tea")])
    assert responses(events) == [{"result": "3 notes about tea"}]
    assert events[-1].actions.skip_summarization is True
    assert events[-1].is_final_response()
    assert len(llm.requests) == 1  # the model is not asked to summarize the result


async def test_single_input_tools_and_objects_with_run() -> None:
    loud = Tool(name="loud", func=lambda text: text.upper(), description="Say it loudly.")

    class Counter:
        name = "count_letters"
        description = "Count the letters of a word."

        def run(self, word: str) -> int:
            return len(word)

    counted = LangchainTool(Counter())
    assert counted.declaration().parameters_json_schema["required"] == ["word"]
    [argument] = LangchainTool(loud).declaration().parameters_json_schema["required"]
    events, _ = await run(
        [LangchainTool(loud), counted],
        [[Call("loud", **{argument: "hi"}), Call("count_letters", word="cairn")], "done"],
    )
    assert responses(events) == [{"result": "HI"}, {"result": 5}]


def test_not_a_tool_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="needs a LangChain tool"):
        LangchainTool(42)


def test_cairn_imports_without_langchain() -> None:
    script = (
        "import sys\n"
        "sys.modules['langchain_core'] = None\n"
        "from cairn.tools.langchain_tool import LangchainTool\n"
        "try:\n"
        "    LangchainTool(object())\n"
        "except TypeError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'cairn[langchain]'" in done.stdout
