"""BaseToolset(tool_name_prefix=...): two toolsets with same-named tools serve one agent."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn import Agent, FunctionTool, InMemoryRunner
from cairn.testing import Call, ScriptedLlm
from cairn.tools.base_tool import BaseTool, BaseToolset


class Search(BaseToolset):
    def __init__(self, where: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)

        def search(query: str) -> str:
            """Search.

            Args:
                query: what to look for.
            """
            return f"{where}: {query}"

        def stats() -> int:
            """Count."""
            return 0

        self.tools: list[BaseTool] = [FunctionTool(search), FunctionTool(stats)]

    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        return self.tools


async def test_prefixed_tools_are_declared_and_called_by_their_prefixed_names() -> None:
    web = Search("web", tool_name_prefix="web", tool_filter=["search"])
    docs = Search("docs", tool_name_prefix="docs")
    llm = ScriptedLlm(
        script=[Call("web_search", query="cairn"), Call("docs_search", query="x"), "ok"]
    )
    runner = InMemoryRunner(agent=Agent(name="a", model=llm, tools=[web, docs]), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="find")])
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)
    ]
    names = [d.name for d in llm.requests[0].function_declarations]
    assert names == ["web_search", "docs_search", "docs_stats"]
    answers = [(r.name, r.response) for e in events for r in e.get_function_responses()]
    assert answers == [
        ("web_search", {"result": "web: cairn"}),
        ("docs_search", {"result": "docs: x"}),
    ]
    assert [t.name for t in web.tools] == ["search", "stats"]  # the toolset's own are unchanged
