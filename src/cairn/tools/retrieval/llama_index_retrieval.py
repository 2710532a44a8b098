"""Retrieval through a LlamaIndex retriever (ADK's ``LlamaIndexRetrieval``)."""

from __future__ import annotations

from typing import Any, Protocol

from cairn.tools.retrieval.base_retrieval_tool import BaseRetrievalTool
from cairn.user_code import call_user_code


class Retriever(Protocol):
    """What the tool needs of a retriever: LlamaIndex's ``BaseRetriever.retrieve``, which
    returns nodes with a ``text``."""

    def retrieve(self, query: Any) -> list[Any]: ...


class LlamaIndexRetrieval(BaseRetrievalTool):
    """Answers the model's ``query`` with the text of the best node ``retriever`` finds
    (e.g. ``VectorStoreIndex(...).as_retriever()``); cairn does not import LlamaIndex itself.
    The retriever runs on a thread, never on the event loop."""

    def __init__(self, *, name: str, description: str, retriever: Retriever) -> None:
        super().__init__(name=name, description=description)
        self.retriever = retriever

    async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
        query = args.get("query")
        if not isinstance(query, str):
            return {"error": f"{self.name} needs a string 'query' to look up"}
        nodes = await call_user_code(self.retriever.retrieve, query)
        if not nodes:
            return f"No matching result found for the query: {query}"
        return nodes[0].text


__all__ = ["LlamaIndexRetrieval"]
