"""ADK's path for OpenAPI tools' parts: the parser, the tool, the toolset."""

from cairn.tools.openapi_tool.openapi_spec_parser.openapi_spec_parser import (
    InvalidOpenApiSpecError,
    OpenApiSpecParser,
    OperationEndpoint,
    ParsedOperation,
)
from cairn.tools.openapi_tool.openapi_spec_parser.openapi_toolset import OpenAPIToolset
from cairn.tools.openapi_tool.openapi_spec_parser.operation_parser import OperationParser
from cairn.tools.openapi_tool.openapi_spec_parser.rest_api_tool import (
    RestApiTool,
    snake_to_lower_camel,
)

__all__ = [
    "InvalidOpenApiSpecError",
    "OpenAPIToolset",
    "OpenApiSpecParser",
    "OperationEndpoint",
    "OperationParser",
    "ParsedOperation",
    "RestApiTool",
    "snake_to_lower_camel",
]
