"""Gemini's built-in tools (Google Search, URL context, code execution, Maps, Vertex AI Search,
RAG retrieval) against recorded Gemini API exchanges: the request carries each tool as the API
expects it, and what the response says about grounding and code comes back on the events,
stored and read back unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from tests.models.test_google_llm import (  # noqa: F401 - clean_environment is autouse
    Replay,
    ask,
    clean_environment,
    gemini,
    responses,
)

from cairn import Agent, Event, Runner
from cairn.agents.run_config import RunConfig, StreamingMode
from cairn.models.errors import ModelCallError
from cairn.sessions import DatabaseSessionService, SqliteSessionService
from cairn.tools import (
    VertexAiSearchTool,
    enterprise_web_search,
    google_maps_grounding,
    google_search,
    url_context,
)
from cairn.tools.gemini_built_in_tool import BuiltInToolNotSupportedError
from cairn.tools.google_search_tool import GoogleSearchTool
from cairn.tools.retrieval import VertexAiRagRetrieval

APP, USER = "grounded", "u1"
DATA_STORE = (
    "projects/my-project/locations/global/collections/default_collection/dataStores/handbook"
)


def recorded(name: str) -> dict[str, Any]:
    path = Path(__file__).parent / "recordings" / "gemini" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def recorded_candidate(name: str, exchange: int = 0) -> dict[str, Any]:
    response = recorded(name)["exchanges"][exchange]["response"]
    body = response["body"] if "body" in response else response["sse"][-1]
    return body["candidates"][0]  # type: ignore[no-any-return]


def camel_case(value: Any) -> Any:
    """``value`` with every key in camelCase (the API reads proto JSON in either spelling)."""
    if isinstance(value, dict):
        return {
            "".join(w if i == 0 else w.title() for i, w in enumerate(k.split("_"))): camel_case(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [camel_case(v) for v in value]
    return value


async def run_turn(
    agent: Agent, store: Any, text: str, session_id: str = "s1", **run: Any
) -> list[Event]:
    runner = Runner(app_name=APP, agent=agent, session_service=store)
    if await store.get_session(app_name=APP, user_id=USER, session_id=session_id) is None:
        await store.create_session(app_name=APP, user_id=USER, session_id=session_id)
    return [
        event
        async for event in runner.run_async(
            user_id=USER,
            session_id=session_id,
            new_message=types.Content(role="user", parts=[types.Part(text=text)]),
            **run,
        )
    ]


async def stored_events(store: Any, session_id: str = "s1") -> list[Event]:
    session = await store.get_session(app_name=APP, user_id=USER, session_id=session_id)
    assert session is not None
    return [e for e in session.events if e.author != "user"]


# -- Google Search --------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["sqlite", "database"])
async def test_google_search_is_sent_as_the_built_in_tool_and_its_grounding_is_stored(
    tmp_path: Path, kind: str
) -> None:
    replay = Replay("google_search")
    agent = Agent(
        name="sports",
        model=gemini(replay),
        instruction="Answer sports questions.",
        tools=[google_search],
    )
    db = tmp_path / "sessions.db"
    store: Any = (
        SqliteSessionService(db)
        if kind == "sqlite"
        else DatabaseSessionService(f"sqlite+aiosqlite:///{db}")
    )
    [answer] = await run_turn(agent, store, "Who won Euro 2024?")

    sent = replay.sent()
    assert sent["tools"] == [{"googleSearch": {}}]  # no function declarations beside it
    assert answer.content is not None and answer.content.parts
    assert answer.content.parts[0].text == "Spain won Euro 2024, beating England 2-1 in the final."
    grounding = answer.grounding_metadata
    assert grounding is not None
    assert grounding.web_search_queries == ["euro 2024 winner", "euro 2024 final score"]
    assert [c.web.title for c in grounding.grounding_chunks or [] if c.web] == [
        "uefa.com",
        "wikipedia.org",
    ]
    [support] = grounding.grounding_supports or []
    assert support.grounding_chunk_indices == [0, 1] and support.segment is not None
    assert grounding.search_entry_point is not None
    assert "euro 2024 winner" in (grounding.search_entry_point.rendered_content or "")

    # Read back by another service on the same file: the metadata is exactly what the API sent.
    await store.close()
    reopened: Any = (
        SqliteSessionService(db)
        if kind == "sqlite"
        else DatabaseSessionService(f"sqlite+aiosqlite:///{db}")
    )
    [read_back] = await stored_events(reopened)
    assert read_back.grounding_metadata == grounding
    dumped = read_back.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert dumped["groundingMetadata"] == recorded_candidate("google_search")["groundingMetadata"]
    await reopened.close()


async def test_streamed_search_grounding_arrives_with_the_last_chunk_and_is_kept(
    tmp_path: Path,
) -> None:
    replay = Replay("stream_google_search")
    agent = Agent(name="sports", model=gemini(replay), tools=[google_search])
    store = SqliteSessionService(tmp_path / "s.db")
    events = await run_turn(
        agent, store, "Who won Euro 2024?", run_config=RunConfig(streaming_mode=StreamingMode.SSE)
    )

    *partials, final = events
    assert [p.partial for p in partials] == [True, True]
    assert all(p.grounding_metadata is None for p in partials)
    assert final.content is not None
    assert final.content.parts and final.content.parts[0].text == (
        "Spain won Euro 2024, beating England 2-1 in the final."
    )
    assert final.grounding_metadata is not None
    assert final.grounding_metadata.web_search_queries == [
        "euro 2024 winner",
        "euro 2024 final score",
    ]
    [kept] = await stored_events(store)
    assert kept.grounding_metadata == final.grounding_metadata
    assert replay.sent()["tools"] == [{"googleSearch": {}}]
    await store.close()


async def test_google_search_with_its_own_model_sends_the_request_to_that_model() -> None:
    replay = Replay("google_search")
    llm = gemini(replay)
    request = ask("Who won Euro 2024?")
    request.model = "gemini-2.5-pro"
    await GoogleSearchTool(model="gemini-2.5-flash").process_llm_request(
        tool_context=None, llm_request=request
    )
    await responses(llm, request)
    assert replay.requests[0].url.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert replay.sent()["tools"] == [{"googleSearch": {}}]


# -- URL context ----------------------------------------------------------------------------------
async def test_url_context_metadata_comes_back_on_the_event_and_is_stored(tmp_path: Path) -> None:
    replay = Replay("url_context")
    agent = Agent(name="reader", model=gemini(replay), tools=[url_context])
    store = SqliteSessionService(tmp_path / "s.db")
    [answer] = await run_turn(agent, store, "Summarize https://example.com/news/cairn-0-1")

    assert replay.sent()["tools"] == [{"urlContext": {}}]
    metadata = answer.url_context_metadata
    assert metadata is not None
    assert [(u.retrieved_url, u.url_retrieval_status) for u in metadata.url_metadata or []] == [
        (
            "https://example.com/news/cairn-0-1",
            types.UrlRetrievalStatus.URL_RETRIEVAL_STATUS_SUCCESS,
        ),
        ("https://example.com/private", types.UrlRetrievalStatus.URL_RETRIEVAL_STATUS_ERROR),
    ]
    assert answer.grounding_metadata is not None
    [kept] = await stored_events(store)
    assert kept.url_context_metadata == metadata
    assert kept.grounding_metadata == answer.grounding_metadata
    await store.close()


# -- code execution -------------------------------------------------------------------------------
CODE_EXECUTION = types.GenerateContentConfig(
    tools=[types.Tool(code_execution=types.ToolCodeExecution())]
)


def code_parts(event: Event) -> list[tuple[str, Any]]:
    """The event's parts as (kind, what), in order."""
    found: list[tuple[str, Any]] = []
    for part in (event.content.parts if event.content else None) or []:
        if part.executable_code is not None:
            found.append(("code", (part.executable_code.language, part.executable_code.code)))
        elif part.code_execution_result is not None:
            result = part.code_execution_result
            found.append(("result", (result.outcome, result.output)))
        elif part.text is not None:
            found.append(("text", part.text))
    return found


EXPECTED_CODE_PARTS = [
    ("text", "I'll add the numbers with Python."),
    ("code", (types.Language.PYTHON, "total = sum(range(1, 101))\nprint(total)\n")),
    ("result", (types.Outcome.OUTCOME_OK, "5050\n")),
    ("text", "The sum of 1 to 100 is 5050."),
]


@pytest.mark.parametrize("streaming", [False, True])
async def test_built_in_code_execution_parts_come_back_in_order_and_are_stored(
    tmp_path: Path, streaming: bool
) -> None:
    replay = Replay("stream_code_execution" if streaming else "code_execution")
    agent = Agent(name="calc", model=gemini(replay), generate_content_config=CODE_EXECUTION)
    store = SqliteSessionService(tmp_path / "s.db")
    mode = StreamingMode.SSE if streaming else StreamingMode.NONE
    events = await run_turn(
        agent, store, "What is 1 + 2 + ... + 100?", run_config=RunConfig(streaming_mode=mode)
    )

    assert replay.sent()["tools"] == [{"codeExecution": {}}]
    final = events[-1]
    assert not final.partial
    assert code_parts(final) == EXPECTED_CODE_PARTS
    assert final.is_final_response()  # it ends in text, not in a code result
    if streaming:  # the partials showed only the text, as it came
        shown = [text for e in events[:-1] for kind, text in code_parts(e) if kind == "text"]
        assert shown == [
            "I'll add the numbers ",
            "with Python.",
            "The sum of 1 to 100 ",
            "is 5050.",
        ]
    [kept] = await stored_events(store)
    assert code_parts(kept) == EXPECTED_CODE_PARTS
    await store.close()


# -- Vertex AI only: Maps, enterprise web search, Vertex AI Search, RAG ---------------------------
@pytest.fixture
def vertex_express(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")


@pytest.mark.usefixtures("vertex_express")
async def test_google_maps_grounding_on_vertex_ai_returns_maps_sources() -> None:
    replay = Replay("vertex_maps_grounding")
    request = ask("What museum is near my hotel?")
    request.model = "gemini-2.5-flash"
    await google_maps_grounding.process_llm_request(tool_context=None, llm_request=request)
    [reply] = await responses(gemini(replay, api_key="vertex-key"), request)

    assert replay.sent()["tools"] == [{"googleMaps": {}}]
    assert reply.grounding_metadata is not None
    [chunk] = reply.grounding_metadata.grounding_chunks or []
    assert chunk.maps is not None and chunk.maps.title == "Louvre Museum"
    assert reply.grounding_metadata.google_maps_widget_context_token == "widgetcontent/AcBXPQdBXp0d"


async def test_enterprise_web_search_on_the_gemini_api_fails_before_sending() -> None:
    replay = Replay("text")
    request = ask("Latest rules on data retention?")
    request.model = "gemini-2.5-flash"
    await enterprise_web_search.process_llm_request(tool_context=None, llm_request=request)
    with pytest.raises(ModelCallError) as raised:
        await responses(gemini(replay), request)

    assert replay.requests == []
    assert not raised.value.retryable
    assert "enterprise_web_search" in str(raised.value)
    assert "GOOGLE_GENAI_USE_VERTEXAI=true" in str(raised.value)


@pytest.mark.usefixtures("vertex_express")
async def test_enterprise_web_search_on_vertex_ai_is_sent_as_the_built_in_tool() -> None:
    replay = Replay("vertex_express_text")
    request = ask("Capital of France?")
    request.model = "gemini-2.5-flash"
    await enterprise_web_search.process_llm_request(tool_context=None, llm_request=request)
    await responses(gemini(replay, api_key="vertex-key"), request)
    assert replay.sent()["tools"] == [{"enterpriseWebSearch": {}}]


class LeaveSearch(VertexAiSearchTool):
    """A search whose filter comes from the session's state, as ADK's docs show."""

    def _build_vertex_ai_search_config(self, readonly_context: Any) -> types.VertexAISearch:
        config = super()._build_vertex_ai_search_config(readonly_context)
        config.filter = f'country: ANY("{readonly_context.state["country"]}")'
        return config


@pytest.mark.usefixtures("vertex_express")
async def test_vertex_ai_search_sends_the_data_store_and_grounds_in_retrieved_pages(
    tmp_path: Path,
) -> None:
    replay = Replay("vertex_ai_search")
    tool = LeaveSearch(data_store_id=DATA_STORE, max_results=5)
    agent = Agent(name="hr", model=gemini(replay, api_key="vertex-key"), tools=[tool])
    store = SqliteSessionService(tmp_path / "s.db")
    await store.create_session(app_name=APP, user_id=USER, session_id="s1", state={"country": "FR"})
    [answer] = await run_turn(agent, store, "How many days of leave do I get?")

    # google-genai writes these nested fields in snake_case on Vertex AI (which reads both).
    assert camel_case(replay.sent()["tools"]) == [
        {
            "retrieval": {
                "vertexAiSearch": {
                    "datastore": DATA_STORE,
                    "filter": 'country: ANY("FR")',
                    "maxResults": 5,
                }
            }
        }
    ]
    assert answer.grounding_metadata is not None
    [chunk] = answer.grounding_metadata.grounding_chunks or []
    assert chunk.retrieved_context is not None and chunk.retrieved_context.title == "Leave policy"
    [kept] = await stored_events(store)
    assert kept.grounding_metadata == answer.grounding_metadata
    await store.close()


def test_vertex_ai_search_needs_one_data_store_or_engine() -> None:
    with pytest.raises(ValueError, match="exactly one of data_store_id"):
        VertexAiSearchTool()
    with pytest.raises(ValueError, match="exactly one of data_store_id"):
        VertexAiSearchTool(data_store_id=DATA_STORE, search_engine_id="projects/p/engines/e")
    with pytest.raises(ValueError, match="give search_engine_id too"):
        VertexAiSearchTool(
            data_store_id=DATA_STORE,
            data_store_specs=[types.VertexAISearchDataStoreSpec(data_store=DATA_STORE)],
        )


@pytest.mark.usefixtures("vertex_express")
async def test_vertex_ai_rag_retrieval_is_sent_as_a_rag_store_for_gemini() -> None:
    replay = Replay("vertex_ai_search")
    corpus = "projects/my-project/locations/us-central1/ragCorpora/123"
    tool = VertexAiRagRetrieval(
        name="handbook",
        description="The employee handbook.",
        rag_resources=[{"rag_corpus": corpus}],
        similarity_top_k=3,
    )
    request = ask("How many days of leave do I get?")
    request.model = "gemini-2.5-flash"
    await tool.process_llm_request(tool_context=None, llm_request=request)
    await responses(gemini(replay, api_key="vertex-key"), request)

    assert camel_case(replay.sent()["tools"]) == [
        {
            "retrieval": {
                "vertexRagStore": {"ragResources": [{"ragCorpus": corpus}], "similarityTopK": 3}
            }
        }
    ]
    assert request.tools_dict == {}  # nothing for cairn to call


# -- what each model accepts ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "tool",
    [google_search, url_context, google_maps_grounding, enterprise_web_search],
    ids=lambda t: t.name,
)
async def test_a_built_in_tool_for_another_model_is_a_clear_error_before_any_call(
    tool: Any,
) -> None:
    request = ask("Hi")
    request.model = "anthropic/claude-sonnet-4-6"
    with pytest.raises(BuiltInToolNotSupportedError) as raised:
        await tool.process_llm_request(tool_context=None, llm_request=request)
    assert isinstance(raised.value, ValueError)  # as ADK raises
    message = str(raised.value)
    assert "anthropic/claude-sonnet-4-6" in message and "Gemini" in message
    assert "AgentTool" in message and "ADK_DISABLE_GEMINI_MODEL_ID_CHECK" in message
    assert request.config.tools is None


async def test_the_model_name_check_can_be_turned_off_for_gemini_under_another_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ADK_DISABLE_GEMINI_MODEL_ID_CHECK", "true")
    request = ask("Hi")
    request.model = "my-tuned-model"
    await google_search.process_llm_request(tool_context=None, llm_request=request)
    assert request.config.tools == [types.Tool(google_search=types.GoogleSearch())]


@pytest.mark.parametrize(
    "model",
    [
        "gemini-2.5-flash",
        "models/gemini-2.5-flash",
        "projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro",
        "gemini/gemini-2.5-flash",
    ],
)
async def test_gemini_is_recognised_under_each_of_its_names(model: str) -> None:
    request = ask("Hi")
    request.model = model
    await url_context.process_llm_request(tool_context=None, llm_request=request)
    assert request.config.tools == [types.Tool(url_context=types.UrlContext())]


async def test_a_built_in_tool_is_never_called_as_a_function() -> None:
    assert google_search.declaration() is None
    with pytest.raises(TypeError, match="run by the Gemini model itself"):
        await google_search.run_async(args={}, tool_context=None)
