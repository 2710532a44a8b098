"""OpenAPI tools: an OpenAPI 3 document's operations as tools (``OpenAPIToolset``)."""

from cairn.tools.openapi_tool.openapi_spec_parser import OpenAPIToolset, RestApiTool

__all__ = ["OpenAPIToolset", "RestApiTool"]
