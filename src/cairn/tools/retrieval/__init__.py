"""Retrieval tools: a ``query`` in, what was found out (ADK's ``tools.retrieval``)."""

from cairn.tools.retrieval.base_retrieval_tool import BaseRetrievalTool
from cairn.tools.retrieval.llama_index_retrieval import LlamaIndexRetrieval
from cairn.tools.retrieval.vertex_ai_rag_retrieval import VertexAiRagRetrieval

__all__ = ["BaseRetrievalTool", "LlamaIndexRetrieval", "VertexAiRagRetrieval"]
