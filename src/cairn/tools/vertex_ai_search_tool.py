"""Vertex AI Search grounding, run by Gemini itself (ADK's ``VertexAiSearchTool``)."""

from __future__ import annotations

from typing import Any

from google.genai import types

from cairn.tools.gemini_built_in_tool import GeminiBuiltInTool


class VertexAiSearchTool(GeminiBuiltInTool):
    """Lets a Gemini model on Vertex AI search a Vertex AI Search data store or engine and
    ground its answer in what it finds (``Event.grounding_metadata``).

    Give exactly one of ``data_store_id``
    (``projects/{p}/locations/{l}/collections/{c}/dataStores/{d}``) and
    ``search_engine_id`` (``.../engines/{e}``); ``data_store_specs`` narrow an engine to
    some of its data stores. ``filter`` and ``max_results`` go with every search. To set
    them per request (a filter from the session's state, say), subclass and override
    ``_build_vertex_ai_search_config(readonly_context)``, as in ADK.

    ``bypass_multi_tools_limit=True`` makes ADK swap in its ``DiscoveryEngineSearchTool``
    (a client of the Discovery Engine API) when the agent has other tools; cairn does not
    call that API itself, and says so when asked (see ``docs/built-in-tools-and-caching.md``).
    """

    def __init__(
        self,
        *,
        data_store_id: str | None = None,
        data_store_specs: list[types.VertexAISearchDataStoreSpec] | None = None,
        search_engine_id: str | None = None,
        filter: str | None = None,
        max_results: int | None = None,
        bypass_multi_tools_limit: bool = False,
        name: str | None = None,
        description: str | None = None,
    ) -> None:
        if (data_store_id is None) == (search_engine_id is None):
            raise ValueError(
                "VertexAiSearchTool needs exactly one of data_store_id "
                "('projects/.../dataStores/...') and search_engine_id "
                "('projects/.../engines/...')"
            )
        if data_store_specs is not None and search_engine_id is None:
            raise ValueError(
                "VertexAiSearchTool(data_store_specs=...) selects data stores of an engine: "
                "give search_engine_id too"
            )
        super().__init__(
            name=name or "vertex_ai_search", description=description or "vertex_ai_search"
        )
        self.data_store_id = data_store_id
        self.data_store_specs = data_store_specs
        self.search_engine_id = search_engine_id
        self.filter = filter
        self.max_results = max_results
        self.bypass_multi_tools_limit = bypass_multi_tools_limit

    def _build_vertex_ai_search_config(self, readonly_context: Any) -> types.VertexAISearch:
        """The search settings of one request (override to derive them from the context)."""
        return types.VertexAISearch(
            datastore=self.data_store_id,
            data_store_specs=self.data_store_specs,
            engine=self.search_engine_id,
            filter=self.filter,
            max_results=self.max_results,
        )

    def built_in_tool(self, tool_context: Any) -> types.Tool:
        search = self._build_vertex_ai_search_config(tool_context)
        return types.Tool(retrieval=types.Retrieval(vertex_ai_search=search))


__all__ = ["VertexAiSearchTool"]
