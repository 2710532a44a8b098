"""The base of tools that look something up for a query (ADK's ``BaseRetrievalTool``)."""

from __future__ import annotations

from google.genai import types

from cairn.tools.base_tool import BaseTool


class BaseRetrievalTool(BaseTool):
    """A tool the model calls with one string, ``query``. Finding nothing is an answer
    (a message saying so), not an error: the model can go on from it."""

    def declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "The query to retrieve."}
                },
            },
        )


__all__ = ["BaseRetrievalTool"]
