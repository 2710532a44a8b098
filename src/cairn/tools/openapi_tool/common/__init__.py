"""ADK's path for the parameter model of OpenAPI tools."""

from cairn.tools.openapi_tool.common import common

__all__ = ["common"]
