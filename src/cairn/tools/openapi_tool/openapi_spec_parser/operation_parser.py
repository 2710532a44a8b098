"""One OpenAPI operation as a tool name, parameters and JSON schema (``OperationParser``)."""

from __future__ import annotations

import json
from typing import Any

from fastapi.openapi.models import Operation

from cairn.tools.openapi_tool.common.common import (
    ApiParameter,
    rename_python_keywords,
    to_snake_case,
)

MAX_TOOL_NAME_LENGTH = 60
"""Tool names are cut to this length (model providers cap function names at 64)."""

_JSON_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_LOCATIONS = ("path", "query", "header", "cookie")


def required_scheme_name(security: list[dict[str, list[str]]] | None) -> str:
    """The security scheme a requirement list asks for ('' for none): the first one named;
    none if an alternative is the empty requirement ``{}`` (authentication is optional)."""
    if not security or any(not requirement for requirement in security):
        return ""
    return next(iter(security[0]), "")


def clean_schema(schema: Any) -> dict[str, Any]:
    """A JSON schema from a document, types as JSON Schema spells them: unknown ``type``
    names (``Any``, ``file``...) dropped, ``String`` lowered; nested schemas likewise."""
    if schema is None or schema is True:
        return {}
    if not isinstance(schema, dict):
        return {}

    def clean(node: Any) -> Any:
        if isinstance(node, list):
            return [clean(item) for item in node]
        if not isinstance(node, dict):
            return node
        result = {key: clean(value) for key, value in node.items()}
        kind = node.get("type")
        if isinstance(kind, str):
            if kind.lower() in _JSON_TYPES:
                result["type"] = kind.lower()
            else:
                del result["type"]
        elif isinstance(kind, list):
            kept = list(dict.fromkeys(k.lower() for k in kind if isinstance(k, str)))
            kept = [k for k in kept if k in _JSON_TYPES]
            if kept:
                result["type"] = kept
            else:
                del result["type"]
        return result

    cleaned: dict[str, Any] = clean(schema)
    return cleaned


def _schema_type(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        others = [k for k in kind if k != "null"]
        return others[0] if len(others) == 1 else None
    return kind if isinstance(kind, str) else None


def _operation_dict(operation: Operation | dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(operation, str):
        loaded: dict[str, Any] = json.loads(operation)
        return loaded
    if isinstance(operation, Operation):
        return operation.model_dump(by_alias=True, exclude_none=True, mode="json")
    # A parameter left unresolved (its reference points nowhere) is dropped, so one broken
    # pointer does not cost the document its other tools.
    declared = operation.get("parameters")
    if isinstance(declared, list):
        kept = [p for p in declared if isinstance(p, dict) and "name" in p and "in" in p]
        operation = {**operation, "parameters": kept}
    return operation


class OperationParser:
    """An operation's tool name (``operationId`` in snake_case, at most 60 characters), its
    parameters (path, query, header and cookie parameters, then the request body: an
    object body's properties one by one, any other body as one ``body`` argument; the
    first media type only), and the JSON schema the model fills."""

    def __init__(
        self,
        operation: Operation | dict[str, Any] | str,
        should_parse: bool = True,
        *,
        preserve_property_names: bool = False,
    ) -> None:
        self._operation = _operation_dict(operation)
        self.operation = Operation.model_validate(self._operation)
        self._preserve_property_names = preserve_property_names
        self._params: list[ApiParameter] = []
        self._return_value: ApiParameter | None = None
        if should_parse:
            self._read_parameters()
            self._read_request_body()
            self._read_return_value()
            self._dedupe_param_names()

    @classmethod
    def load(
        cls,
        operation: Operation | dict[str, Any],
        params: list[ApiParameter],
        return_value: ApiParameter | None = None,
        *,
        preserve_property_names: bool = False,
    ) -> OperationParser:
        """A parser of ``operation`` with its parameters already known."""
        parser = cls(operation, should_parse=False, preserve_property_names=preserve_property_names)
        parser._params = list(params)
        parser._return_value = return_value
        return parser

    def _py_name(self, original: str) -> str:
        return rename_python_keywords(original) if self._preserve_property_names else ""

    def _read_parameters(self) -> None:
        for declared in self._operation.get("parameters") or []:
            if "$ref" in declared:
                continue
            location = declared.get("in", "")
            if location not in _LOCATIONS:
                continue
            schema = clean_schema(declared.get("schema"))
            description = declared.get("description") or ""
            if description and not schema.get("description"):
                schema["description"] = description
            self._params.append(
                ApiParameter(
                    original_name=declared["name"],
                    param_location=location,
                    param_schema=schema,
                    description=description,
                    # A path cannot be built without its parameters, whatever the flag says.
                    required=location == "path" or bool(declared.get("required")),
                    py_name=self._py_name(declared["name"]),
                )
            )

    def request_body(self) -> tuple[str, dict[str, Any]] | None:
        """(media type, schema) of the request body's first media type, or None."""
        body = self._operation.get("requestBody")
        content = body.get("content") if isinstance(body, dict) else None
        if not content:
            return None
        media_type, media = next(iter(content.items()))
        schema = media.get("schema") if isinstance(media, dict) else None
        return media_type, clean_schema(schema)

    def _read_request_body(self) -> None:
        found = self.request_body()
        if found is None:
            return
        body = self._operation.get("requestBody") or {}
        description = body.get("description") or ""
        _, schema = found
        kind = _schema_type(schema)
        if kind == "object":
            required = set(schema.get("required") or [])
            for name, property_schema in (schema.get("properties") or {}).items():
                cleaned = clean_schema(property_schema)
                self._params.append(
                    ApiParameter(
                        original_name=name,
                        param_location="body",
                        param_schema=cleaned,
                        description=cleaned.get("description") or "",
                        required=name in required,
                        py_name=self._py_name(name),
                    )
                )
            return
        if kind == "array":
            name = "array"
        elif kind is None or any(k in schema for k in ("oneOf", "anyOf", "allOf")):
            name = "body"
        else:
            name = ""  # a scalar body: named by its location
        if description and not schema.get("description"):
            schema = {**schema, "description": description}
        self._params.append(
            ApiParameter(
                original_name=name,
                param_location="body",
                param_schema=schema,
                description=description,
                required=bool(body.get("required")),
            )
        )

    def _read_return_value(self) -> None:
        responses = self._operation.get("responses") or {}
        success = sorted(code for code in responses if str(code).startswith("2"))
        schema: dict[str, Any] = {}
        if success:
            response = responses[success[0]]
            for media in (response.get("content") or {}).values():
                if isinstance(media, dict) and media.get("schema") is not None:
                    schema = clean_schema(media["schema"])
                    break
        self._return_value = ApiParameter(original_name="", param_location="", param_schema=schema)

    def _dedupe_param_names(self) -> None:
        seen: dict[str, int] = {}
        for param in self._params:
            name = param.name
            if name in seen:
                param.py_name = f"{name}_{seen[name]}"
                seen[name] += 1
            else:
                seen[name] = 0

    def get_function_name(self) -> str:
        """The tool's name: the operation id in snake_case, cut to 60 characters."""
        operation_id = self._operation.get("operationId")
        if not operation_id:
            raise ValueError("the operation has no operationId to name its tool after")
        return to_snake_case(str(operation_id))[:MAX_TOOL_NAME_LENGTH]

    def get_parameters(self) -> list[ApiParameter]:
        """The operation's parameters, in order (path/query/header/cookie, then body)."""
        return self._params

    def get_return_value(self) -> ApiParameter:
        """The schema of the first 2xx response's body ({} if it declares none)."""
        if self._return_value is None:
            self._read_return_value()
        assert self._return_value is not None
        return self._return_value

    def get_auth_scheme_name(self) -> str:
        """The security scheme the operation itself asks for ('' for none)."""
        return required_scheme_name(self._operation.get("security"))

    def get_json_schema(self) -> dict[str, Any]:
        """The JSON schema of the tool's arguments, keyed by ``py_name``."""
        return {
            "type": "object",
            "properties": {p.name: p.param_schema for p in self._params},
            "required": [p.name for p in self._params if p.required],
        }
