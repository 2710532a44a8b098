"""From an OpenAPI 3 document to one ``ParsedOperation`` per operation (ADK's names).

``$ref`` pointers inside the document are resolved with ``referencing`` (the library
``jsonschema`` uses); a reference that points back into itself is cut where it recurs, so
recursive schemas end in an empty (any-value) schema.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from fastapi.openapi.models import Operation
from pydantic import BaseModel, ConfigDict
from referencing import Registry, Resource
from referencing.exceptions import PointerToNowhere, Unresolvable

from cairn.auth.auth_credential import AuthCredential
from cairn.auth.auth_schemes import AuthScheme
from cairn.errors import CairnError
from cairn.tools.openapi_tool.common.common import ApiParameter, to_snake_case
from cairn.tools.openapi_tool.openapi_spec_parser._security_schemes import scheme_from_spec
from cairn.tools.openapi_tool.openapi_spec_parser.operation_parser import (
    OperationParser,
    required_scheme_name,
)

logger = logging.getLogger(__name__)

HTTP_METHODS = ("get", "post", "put", "delete", "patch", "head", "options", "trace")
_DOCUMENT_URI = "urn:cairn:openapi-document"


class InvalidOpenApiSpecError(CairnError, ValueError):
    """The OpenAPI document cannot be read; the message names what and how to fix it."""


class OperationEndpoint(BaseModel):
    """Where an operation is sent: the server's ``base_url``, the ``path`` template, the
    HTTP ``method``."""

    base_url: str
    path: str
    method: str


class ParsedOperation(BaseModel):
    """One operation of a document, ready to become a ``RestApiTool``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str
    endpoint: OperationEndpoint
    operation: Operation
    parameters: list[ApiParameter]
    return_value: ApiParameter
    auth_scheme: AuthScheme | None = None
    auth_credential: AuthCredential | None = None
    additional_context: Any | None = None
    """cairn keeps ``{"auth_problem": why}`` here when the operation's security scheme is
    one cairn cannot use (the tool then says so when called)."""


class OpenApiSpecParser:
    """Reads an OpenAPI 3 document (a dict) into ``ParsedOperation`` objects.

    ``preserve_property_names=True`` keeps the API's own parameter names for the model
    instead of snake_case ones.
    """

    def __init__(self, *, preserve_property_names: bool = False) -> None:
        self._preserve_property_names = preserve_property_names

    def parse(self, openapi_spec_dict: dict[str, Any]) -> list[ParsedOperation]:
        """Every operation of the document, references resolved."""
        check_document(openapi_spec_dict)
        return self._collect_operations(resolve_references(openapi_spec_dict))

    def _collect_operations(self, spec: dict[str, Any]) -> list[ParsedOperation]:
        base_url = server_url(spec)
        global_scheme = required_scheme_name(spec.get("security"))
        schemes = (spec.get("components") or {}).get("securitySchemes") or {}
        operations: list[ParsedOperation] = []
        for path, path_item in (spec.get("paths") or {}).items():
            if not isinstance(path_item, dict):
                continue
            shared = [p for p in path_item.get("parameters") or [] if isinstance(p, dict)]
            for method in HTTP_METHODS:
                operation = path_item.get(method)
                if not isinstance(operation, dict):
                    continue
                operation = _with_path_parameters(operation, shared)
                operation.setdefault("operationId", to_snake_case(f"{path}_{method}"))
                parser = OperationParser(
                    operation, preserve_property_names=self._preserve_property_names
                )
                scheme_name = parser.get_auth_scheme_name()
                if not scheme_name and operation.get("security") is None:
                    scheme_name = global_scheme
                scheme, problem = None, None
                if scheme_name:
                    scheme, problem = scheme_from_spec(scheme_name, schemes.get(scheme_name))
                operations.append(
                    ParsedOperation(
                        name=parser.get_function_name(),
                        description=operation.get("description") or operation.get("summary") or "",
                        endpoint=OperationEndpoint(base_url=base_url, path=path, method=method),
                        operation=parser.operation,
                        parameters=parser.get_parameters(),
                        return_value=parser.get_return_value(),
                        auth_scheme=scheme,
                        additional_context={"auth_problem": problem} if problem else {},
                    )
                )
        return operations


def check_document(spec: Any) -> None:
    """Raise ``InvalidOpenApiSpecError`` unless ``spec`` is an OpenAPI 3 document."""
    if not isinstance(spec, dict):
        raise InvalidOpenApiSpecError(
            f"an OpenAPI document is a JSON object, not {type(spec).__name__}: pass the "
            "parsed document as spec_dict, or its text as spec_str."
        )
    if "swagger" in spec:
        raise InvalidOpenApiSpecError(
            f"this is a Swagger {spec['swagger']} document; OpenAPIToolset reads OpenAPI 3. "
            "Convert it first (e.g. with swagger2openapi)."
        )
    version = str(spec.get("openapi", ""))
    if not version.startswith("3"):
        raise InvalidOpenApiSpecError(
            "the document has no 'openapi: 3.x' field; OpenAPIToolset reads OpenAPI 3 "
            f"documents (got openapi={spec.get('openapi')!r})."
        )


def server_url(spec: dict[str, Any]) -> str:
    """The first server's URL, its ``{variables}`` filled with their defaults ('' if none)."""
    servers = spec.get("servers") or []
    first = servers[0] if servers and isinstance(servers[0], dict) else {}
    url = str(first.get("url") or "")
    for name, variable in (first.get("variables") or {}).items():
        if isinstance(variable, dict) and "default" in variable:
            url = url.replace("{" + name + "}", str(variable["default"]))
    return url


def _with_path_parameters(
    operation: dict[str, Any], shared: list[dict[str, Any]]
) -> dict[str, Any]:
    """``operation`` with its path item's parameters, unless it redefines one (same name
    and location), as OpenAPI says."""
    own = [p for p in operation.get("parameters") or [] if isinstance(p, dict)]
    defined = {(p.get("name"), p.get("in")) for p in own}
    merged = own + [p for p in shared if (p.get("name"), p.get("in")) not in defined]
    return {**operation, "parameters": merged}


def resolve_references(spec: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``spec`` with every ``$ref`` inside it replaced by what it points to
    (sibling keys such as ``description`` kept). A reference met again while it is being
    expanded is cut there; one that points nowhere is dropped with a warning; one into
    another document is refused (bundle the document first)."""
    resolver = Registry().with_resource(_DOCUMENT_URI, Resource.opaque(spec))
    lookup = resolver.resolver(base_uri=_DOCUMENT_URI)
    finished: dict[str, Any] = {}

    def expand(node: Any, expanding: tuple[str, ...]) -> tuple[Any, bool]:
        """(the node resolved, whether a recursion was cut inside it)."""
        if isinstance(node, list):
            items = [expand(item, expanding) for item in node]
            return [item for item, _ in items], any(cut for _, cut in items)
        if not isinstance(node, dict):
            return node, False
        reference = node.get("$ref")
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if not isinstance(reference, str):
            values = {key: expand(value, expanding) for key, value in node.items()}
            return {k: v for k, (v, _) in values.items()}, any(c for _, c in values.values())
        if reference in expanding:
            return expand(siblings, expanding)[0], True
        if reference in finished:
            target, cut = copy.deepcopy(finished[reference]), False
        else:
            if not reference.startswith("#"):
                raise InvalidOpenApiSpecError(
                    f"the reference {reference!r} points into another document; cairn "
                    "resolves references within the document only. Bundle the document "
                    "into one file first (e.g. with redocly bundle)."
                )
            try:
                found = lookup.lookup(reference).contents
            except (PointerToNowhere, Unresolvable):
                logger.warning("the OpenAPI reference %r points nowhere; dropped", reference)
                return expand(siblings, expanding)[0], False
            target, cut = expand(found, (*expanding, reference))
            if not cut:
                finished[reference] = copy.deepcopy(target)
        resolved_siblings, sibling_cut = expand(siblings, expanding)
        if isinstance(target, dict):
            return {**target, **resolved_siblings}, cut or sibling_cut
        return target, cut

    resolved, _ = expand(spec, ())
    assert isinstance(resolved, dict)
    return resolved
