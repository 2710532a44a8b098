"""CrewaiTool with real CrewAI tools; run in a venv that has crewai (tests/tools/test_crewai_tool.py
makes it), with cairn's source on PYTHONPATH. Prints one JSON object."""

from __future__ import annotations

import asyncio
import json

from crewai.tools import BaseTool, tool
from google.genai import types
from pydantic import BaseModel, Field

from cairn import Agent, InMemoryRunner
from cairn.testing import Call, ScriptedLlm
from cairn.tools.crewai_tool import CrewaiTool


class WordCountInput(BaseModel):
    text: str = Field(description="the text whose words to count")


class WordCounter(BaseTool):
    name: str = "Word Counter"
    description: str = "Count the words of a text."
    args_schema: type[BaseModel] = WordCountInput

    def _run(self, text: str) -> int:
        return len(text.split())


@tool("Reverse Text")
def reverse_text(text: str) -> str:
    """Reverse a text."""
    return text[::-1]


async def main() -> None:
    counter = CrewaiTool(WordCounter(), name="")
    reverser = CrewaiTool(reverse_text, name="mirror", description="Mirror a text.")
    llm = ScriptedLlm(
        script=[
            [
                Call("word_counter", text="the tide comes in"),
                Call("mirror", text="tide"),
                Call("word_counter", words="oops"),
            ],
            "4 words; edit.",
        ]
    )
    runner = InMemoryRunner(
        agent=Agent(name="helper", model=llm, tools=[counter, reverser]), app_name="crew"
    )
    await runner.session_service.create_session(app_name="crew", user_id="u", session_id="s")
    message = types.Content(role="user", parts=[types.Part(text="go")])
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]
    print(
        json.dumps(
            {
                "declarations": [
                    d.model_dump(mode="json", exclude_none=True)
                    for d in llm.requests[0].function_declarations
                ],
                "responses": [r.response for e in events for r in e.get_function_responses()],
                "answer": events[-1].content.parts[0].text,
            }
        )
    )


asyncio.run(main())
