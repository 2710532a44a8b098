"""Vertex AI RAG Engine retrieval, run by Gemini itself (ADK's ``VertexAiRagRetrieval``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from google.genai import types

from cairn.models.llm_request import LlmRequest
from cairn.models.model_names import gemini_model_check_disabled, is_gemini_model
from cairn.tools.gemini_built_in_tool import BuiltInToolNotSupportedError
from cairn.tools.retrieval.base_retrieval_tool import BaseRetrievalTool


class RagResourceLike(Protocol):
    """A RAG resource of any make (``vertexai.rag.RagResource``, say): a corpus and,
    optionally, some of its files."""

    rag_corpus: str | None
    rag_file_ids: list[str] | None


RagResource = types.VertexRagStoreRagResource | Mapping[str, Any] | RagResourceLike


def _as_rag_resource(resource: RagResource) -> types.VertexRagStoreRagResource:
    if isinstance(resource, types.VertexRagStoreRagResource):
        return resource
    if isinstance(resource, Mapping):
        return types.VertexRagStoreRagResource.model_validate(dict(resource))
    if not (hasattr(resource, "rag_corpus") or hasattr(resource, "rag_file_ids")):
        raise TypeError(
            "VertexAiRagRetrieval(rag_resources=[...]) takes types.VertexRagStoreRagResource, "
            "a mapping, or an object with rag_corpus / rag_file_ids; got "
            f"{type(resource).__name__}"
        )
    return types.VertexRagStoreRagResource(
        rag_corpus=getattr(resource, "rag_corpus", None),
        rag_file_ids=getattr(resource, "rag_file_ids", None),
    )


class VertexAiRagRetrieval(BaseRetrievalTool):
    """Grounds a Gemini model's answers in RAG Engine corpora: the request carries
    ``Tool(retrieval=Retrieval(vertex_rag_store=...))`` and the model retrieves on Vertex
    AI's side (``GOOGLE_GENAI_USE_VERTEXAI=true``).

    With another model ADK calls the RAG Engine's API itself and hands the model the
    passages; cairn does not call Google Cloud APIs from the runtime, so that is a
    ``BuiltInToolNotSupportedError`` naming what to do instead.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str,
        rag_corpora: list[str] | None = None,
        rag_resources: list[RagResource] | None = None,
        similarity_top_k: int | None = None,
        vector_distance_threshold: float | None = None,
    ) -> None:
        super().__init__(name=name, description=description)
        self.vertex_rag_store = types.VertexRagStore(
            rag_corpora=rag_corpora,
            rag_resources=[_as_rag_resource(r) for r in rag_resources] if rag_resources else None,
            similarity_top_k=similarity_top_k,
            vector_distance_threshold=vector_distance_threshold,
        )

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        if not (is_gemini_model(llm_request.model) or gemini_model_check_disabled()):
            raise BuiltInToolNotSupportedError(
                tool=f"VertexAiRagRetrieval ({self.name})", model=llm_request.model
            )
        tools = list(llm_request.config.tools or [])
        tools.append(types.Tool(retrieval=types.Retrieval(vertex_rag_store=self.vertex_rag_store)))
        llm_request.config.tools = tools

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        raise TypeError(
            f"VertexAiRagRetrieval {self.name!r} is run by the Gemini model on Vertex AI and is "
            "never called as a function; give it to an LlmAgent whose model is Gemini"
        )


__all__ = ["RagResourceLike", "VertexAiRagRetrieval"]
