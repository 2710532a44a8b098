"""Custom tools and toolsets written as for ADK: cairn calls the hooks they override."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn import Agent, InMemoryRunner
from cairn.models.llm_request import LlmRequest
from cairn.testing import Call, ScriptedLlm
from cairn.tools import BaseTool, BaseToolset

DECLARED = types.FunctionDeclaration(
    name="lookup",
    description="Look a word up.",
    parameters_json_schema={"type": "object", "properties": {"word": {"type": "string"}}},
)


class Lookup(BaseTool):
    """As ADK tools are written: a ``declaration`` field and a ``_get_declaration`` override."""

    def __init__(self) -> None:
        super().__init__(name="lookup", description="Look a word up.")
        self.declaration = DECLARED

    def _get_declaration(self) -> types.FunctionDeclaration | None:
        return self.declaration

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        return {"meaning": f"{args['word']}!"}


class Listed(BaseToolset):
    def __init__(self, tools: list[BaseTool], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tools = tools
        self.listings = 0
        self.requests = 0

    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        self.listings += 1
        return self.tools

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        self.requests += 1


async def run(agent: Agent) -> list[Any]:
    runner = InMemoryRunner(agent=agent, app_name="app")
    await runner.session_service.create_session(app_name="app", user_id="u", session_id="s")
    message = types.Content(role="user", parts=[types.Part(text="go")])
    return [e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)]


async def test_a_tool_declared_through_get_declaration_is_offered_and_runs() -> None:
    llm = ScriptedLlm(script=[Call("lookup", word="cairn"), "ok"])
    events = await run(Agent(name="a", model=llm, tools=[Lookup()]))
    assert events[1].get_function_responses()[0].response == {"meaning": "cairn!"}
    request = LlmRequest()
    request.append_tools([Lookup()])
    assert request.config.tools[0].function_declarations == [DECLARED]


async def test_a_prefixed_copy_declares_its_new_name() -> None:
    toolset = Listed([Lookup()], tool_name_prefix="dict")
    [renamed] = await toolset.get_tools_with_prefix()
    assert renamed.name == "dict_lookup"
    declared = renamed._get_declaration()
    assert declared is not None and declared.name == "dict_lookup"


async def test_a_toolset_is_listed_once_per_invocation_and_sees_each_request() -> None:
    toolset = Listed([Lookup()])
    llm = ScriptedLlm(script=[Call("lookup", word="x"), "ok"])
    await run(Agent(name="a", model=llm, tools=[toolset]))
    assert toolset.listings == 1  # two model requests in one invocation
    assert toolset.requests == 2


async def test_a_toolset_that_cannot_list_may_offer_tools_of_its_own() -> None:
    class NeedsLogin(BaseToolset):
        async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
            raise ConnectionError("HTTP 401")

        async def on_tools_listing_error(
            self, error: Exception, readonly_context: Any = None
        ) -> list[BaseTool]:
            return [Lookup()]

    llm = ScriptedLlm(script=[Call("mcp_lookup", word="y"), "ok"])
    events = await run(Agent(name="a", model=llm, tools=[NeedsLogin(tool_name_prefix="mcp")]))
    assert events[1].get_function_responses()[0].response == {"meaning": "y!"}


async def test_a_tool_without_run_async_says_so() -> None:
    class Bare(BaseTool):
        pass

    tool = Bare(name="bare", description="")
    try:
        await tool.run_async(args={}, tool_context=None)
    except NotImplementedError as error:
        assert "bare" in str(error)
    else:
        raise AssertionError("expected NotImplementedError")


def test_a_long_running_tool_tells_the_model_in_its_declaration() -> None:
    from cairn.tools import FunctionTool, LongRunningFunctionTool

    def start_job(name: str) -> None:
        """Start a job."""

    tool = LongRunningFunctionTool(start_job)
    assert tool.description == "Start a job."  # the note is for the model, in the declaration
    declared = tool.declaration()
    assert declared.description.startswith("Start a job.\n\nNOTE: This is a long-running")

    class Shouting(FunctionTool):  # an ADK-style override calling super()._get_declaration()
        def _get_declaration(self) -> types.FunctionDeclaration | None:
            found = super()._get_declaration()
            assert found is not None
            return found.model_copy(update={"description": (found.description or "").upper()})

    request = LlmRequest()
    request.append_tools([Shouting(start_job)])
    assert request.config.tools[0].function_declarations[0].description == "START A JOB."


async def test_set_model_response_takes_the_schemas_adk_takes() -> None:
    import inspect

    from pydantic import BaseModel

    from cairn.tools.set_model_response_tool import SetModelResponseTool

    class Item(BaseModel):
        id: int

    class Actions:
        set_model_response: Any = None

    class Ctx:
        actions = Actions()

    items = SetModelResponseTool(list[Item])
    assert list(inspect.signature(items.func).parameters) == ["items"]
    assert await items.run_async(args={"items": [{"id": "1"}]}, tool_context=Ctx()) == [{"id": 1}]
    assert "items" in items.declaration().parameters_json_schema["properties"]

    words = SetModelResponseTool(list[str])
    assert await words.run_async(args={"response": ["a"]}, tool_context=Ctx()) == ["a"]
    raw = SetModelResponseTool({"type": "object", "properties": {"r": {"type": "string"}}})
    assert await raw.run_async(args={"response": {"r": "x"}}, tool_context=Ctx()) == {"r": "x"}
    assert raw.func() == "Response set successfully."
    # A wrong answer goes back to the model to fix (ADK raises the ValidationError).
    wrong = await items.run_async(args={"items": [{"id": "x"}]}, tool_context=Ctx())
    assert "does not match" in wrong["error"]
