"""Retrieval tools (ADK's ``tools.retrieval``): a ``query`` function for the model, answered by
a retriever on a thread; Vertex AI RAG as Gemini's built-in retrieval."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import pytest
from google.genai import types

from cairn import Agent, InMemoryRunner
from cairn.models import LlmRequest
from cairn.testing import Call, ScriptedLlm
from cairn.tools.gemini_built_in_tool import BuiltInToolNotSupportedError
from cairn.tools.retrieval import BaseRetrievalTool, LlamaIndexRetrieval, VertexAiRagRetrieval


@dataclasses.dataclass
class Node:
    text: str


class Shelf:
    """A retriever as LlamaIndex's look: ``retrieve(query)`` returns the best nodes first."""

    def __init__(self, books: dict[str, str]) -> None:
        self.books = books
        self.threads: list[str] = []

    def retrieve(self, query: str) -> list[Node]:
        self.threads.append(threading.current_thread().name)
        return [Node(text) for word, text in self.books.items() if word in query.lower()]


async def test_the_model_asks_a_query_and_gets_the_best_passage() -> None:
    shelf = Shelf(
        {"refund": "Refunds are issued within 14 days.", "gift": "Gift cards never expire."}
    )
    tool = LlamaIndexRetrieval(name="handbook", description="The shop's handbook.", retriever=shelf)
    llm = ScriptedLlm(script=[Call("handbook", query="refund policy"), "Within 14 days."])
    runner = InMemoryRunner(agent=Agent(name="clerk", model=llm, tools=[tool]), app_name="shop")
    await runner.session_service.create_session(app_name="shop", user_id="u", session_id="s")
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id="s", new_message=types.UserContent("Refunds?")
        )
    ]

    [declaration] = llm.requests[0].function_declarations
    assert declaration.name == "handbook" and declaration.description == "The shop's handbook."
    assert declaration.parameters_json_schema == {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "The query to retrieve."}},
    }
    [response] = [r for e in events for r in e.get_function_responses()]
    assert response.response == {"result": "Refunds are issued within 14 days."}
    assert shelf.threads and all(name.startswith("cairn-user") for name in shelf.threads)


async def test_finding_nothing_is_an_answer_and_a_missing_query_an_error_for_the_model() -> None:
    tool = LlamaIndexRetrieval(name="handbook", description="d", retriever=Shelf({}))
    assert await tool.run_async(args={"query": "parking"}, tool_context=None) == (
        "No matching result found for the query: parking"
    )
    assert "needs a string 'query'" in (await tool.run_async(args={}, tool_context=None))["error"]


def test_a_retrieval_tool_of_ones_own_declares_the_query() -> None:
    class Faq(BaseRetrievalTool):
        async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
            return "42"

    declaration = Faq(name="faq", description="Frequent questions.").declaration()
    assert declaration.name == "faq"
    assert declaration.parameters_json_schema is not None
    assert list(declaration.parameters_json_schema["properties"]) == ["query"]


@dataclasses.dataclass
class RagResource:  # shaped like vertexai.rag.RagResource
    rag_corpus: str | None
    rag_file_ids: list[str] | None = None


async def test_vertex_rag_store_takes_resources_of_any_shape() -> None:
    corpus = "projects/p/locations/us-central1/ragCorpora/1"
    tool = VertexAiRagRetrieval(
        name="docs",
        description="Docs.",
        rag_corpora=[corpus],
        rag_resources=[RagResource(corpus, ["f1"]), {"rag_corpus": corpus}],
        vector_distance_threshold=0.4,
    )
    request = LlmRequest(model="gemini-2.5-flash")
    await tool.process_llm_request(tool_context=None, llm_request=request)
    [entry] = request.config.tools or []
    assert isinstance(entry, types.Tool) and entry.retrieval is not None
    store = entry.retrieval.vertex_rag_store
    assert store is not None and store.rag_corpora == [corpus]
    assert [(r.rag_corpus, r.rag_file_ids) for r in store.rag_resources or []] == [
        (corpus, ["f1"]),
        (corpus, None),
    ]
    assert store.vector_distance_threshold == 0.4
    with pytest.raises(TypeError, match="rag_corpus / rag_file_ids"):
        VertexAiRagRetrieval(name="d", description="d", rag_resources=[42])  # type: ignore[list-item]


async def test_vertex_rag_with_another_model_says_what_to_do() -> None:
    tool = VertexAiRagRetrieval(name="docs", description="Docs.", rag_corpora=["c"])
    request = LlmRequest(model="openai/gpt-4o-mini")
    with pytest.raises(BuiltInToolNotSupportedError, match="openai/gpt-4o-mini"):
        await tool.process_llm_request(tool_context=None, llm_request=request)
