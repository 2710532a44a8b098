"""``OpenAPIToolset``: every operation of an OpenAPI 3 document as a ``RestApiTool``."""

from __future__ import annotations

import json
import logging
import ssl
from collections.abc import Callable
from typing import Any, Literal

from cairn.auth.auth_credential import AuthCredential
from cairn.auth.auth_schemes import AuthScheme
from cairn.tools.base_tool import BaseTool, BaseToolset, ToolPredicate
from cairn.tools.openapi_tool.openapi_spec_parser.openapi_spec_parser import (
    InvalidOpenApiSpecError,
    OpenApiSpecParser,
)
from cairn.tools.openapi_tool.openapi_spec_parser.operation_parser import MAX_TOOL_NAME_LENGTH
from cairn.tools.openapi_tool.openapi_spec_parser.rest_api_tool import (
    HttpxClientFactory,
    RestApiTool,
)

logger = logging.getLogger(__name__)


class MissingYamlError(ImportError):
    """Reading a YAML document needs PyYAML: ``pip install 'cairn[openapi]'``."""


def load_spec(spec_str: str, spec_type: Literal["json", "yaml"]) -> dict[str, Any]:
    """The document ``spec_str`` holds, in JSON or YAML (``InvalidOpenApiSpecError`` if it
    does not parse, or is not an object)."""
    if spec_type == "json":
        try:
            loaded = json.loads(spec_str)
        except json.JSONDecodeError as error:
            raise InvalidOpenApiSpecError(
                f"spec_str is not JSON ({error.msg} at line {error.lineno}, column "
                f"{error.colno}); for a YAML document pass spec_str_type='yaml'."
            ) from None
    elif spec_type == "yaml":
        try:
            import yaml
        except ImportError:
            raise MissingYamlError(
                "reading a YAML OpenAPI document needs PyYAML: pip install 'cairn[openapi]' "
                "(or pass the document as JSON, or parsed, as spec_dict)."
            ) from None
        try:
            loaded = yaml.safe_load(spec_str)
        except yaml.YAMLError as error:
            raise InvalidOpenApiSpecError(f"spec_str is not YAML: {error}") from None
    else:
        raise InvalidOpenApiSpecError(f"spec_str_type is 'json' or 'yaml', not {spec_type!r}")
    if not isinstance(loaded, dict):
        raise InvalidOpenApiSpecError(
            f"an OpenAPI document is an object, but spec_str holds a {type(loaded).__name__}"
        )
    return loaded


class OpenAPIToolset(BaseToolset):
    """The operations of an OpenAPI 3 document (``spec_dict``, or ``spec_str`` in JSON or
    YAML) as tools, one ``RestApiTool`` each, named after their operation ids.

    ``auth_scheme`` and ``auth_credential`` authenticate every tool (instead of the
    document's own security schemes); ``credential_key`` keeps one credential for all of
    them. ``tool_filter`` and ``tool_name_prefix`` select and rename the tools, as for any
    toolset. Requests go to public hosts only unless ``allow_private_network_access``.
    ``await toolset.get_tools()`` lists the tools; ``get_tool(name)`` finds one.
    """

    def __init__(
        self,
        *,
        spec_dict: dict[str, Any] | None = None,
        spec_str: str | None = None,
        spec_str_type: Literal["json", "yaml"] = "json",
        auth_scheme: AuthScheme | None = None,
        auth_credential: AuthCredential | None = None,
        credential_key: str | None = None,
        tool_filter: ToolPredicate | Callable[[BaseTool, Any], bool] | list[str] | None = None,
        tool_name_prefix: str | None = None,
        ssl_verify: bool | str | ssl.SSLContext | None = None,
        header_provider: Callable[[Any], dict[str, str]] | None = None,
        httpx_client_factory: HttpxClientFactory | None = None,
        preserve_property_names: bool = False,
        allow_private_network_access: bool = False,
    ) -> None:
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        if spec_dict is None:
            if spec_str is None:
                raise InvalidOpenApiSpecError(
                    "OpenAPIToolset needs the document: spec_dict=<the parsed document> or "
                    "spec_str=<its JSON or YAML text> (with spec_str_type='yaml' for YAML)."
                )
            spec_dict = load_spec(spec_str, spec_str_type)
        self._ssl_verify = ssl_verify
        self._header_provider = header_provider
        self._httpx_client_factory = httpx_client_factory
        self._allow_private_network_access = allow_private_network_access
        self._preserve_property_names = preserve_property_names
        self._tools: list[RestApiTool] = self._parse(spec_dict)
        for tool in self._tools:
            if auth_scheme is not None:
                tool.configure_auth_scheme(auth_scheme)
            if auth_credential is not None:
                tool.configure_auth_credential(auth_credential)
            if credential_key is not None:
                tool.configure_credential_key(credential_key)

    def _parse(self, spec: dict[str, Any]) -> list[RestApiTool]:
        parser = OpenApiSpecParser(preserve_property_names=self._preserve_property_names)
        tools = [
            RestApiTool.from_parsed_operation(
                operation,
                ssl_verify=self._ssl_verify,
                header_provider=self._header_provider,
                httpx_client_factory=self._httpx_client_factory,
                allow_private_network_access=self._allow_private_network_access,
            )
            for operation in parser.parse(spec)
        ]
        # Operation ids that agree in their first 60 characters give the same name: later
        # ones get _2, _3... so that each operation stays callable.
        taken = {tool.name for tool in tools}
        assigned: set[str] = set()
        for tool in tools:
            if tool.name in assigned:
                base, number = tool.name, 2
                while tool.name in assigned or tool.name in taken:
                    suffix = f"_{number}"
                    tool.name = base[: MAX_TOOL_NAME_LENGTH - len(suffix)] + suffix
                    number += 1
            assigned.add(tool.name)
        return tools

    def configure_ssl_verify_all(
        self, ssl_verify: bool | str | ssl.SSLContext | None = None
    ) -> None:
        """``RestApiTool.configure_ssl_verify`` for every tool."""
        self._ssl_verify = ssl_verify
        for tool in self._tools:
            tool.configure_ssl_verify(ssl_verify)

    async def get_tools(self, readonly_context: Any = None) -> list[BaseTool]:
        """The document's tools that ``tool_filter`` selects."""
        return [tool for tool in self._tools if self._is_selected(tool, readonly_context)]

    def get_tool(self, tool_name: str) -> RestApiTool | None:
        """The tool called ``tool_name`` (its name without ``tool_name_prefix``), or None."""
        return next((tool for tool in self._tools if tool.name == tool_name), None)
