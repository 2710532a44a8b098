"""ADK's path for the auth helpers of OpenAPI tools."""

from cairn.tools.openapi_tool.auth import auth_helpers

__all__ = ["auth_helpers"]
