"""One parameter of an OpenAPI operation, and the naming rules that turn it into a tool argument."""

from __future__ import annotations

import json
import keyword
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_LOWER_THEN_UPPER = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_ACRONYM_THEN_WORD = re.compile(r"(?<=[A-Z])(?=[A-Z][a-z])")

_DEFAULT_NAMES = {
    "body": "body",
    "query": "query_param",
    "path": "path_param",
    "header": "header_param",
    "cookie": "cookie_param",
}
"""The argument name of a parameter whose own name gives none, by where it goes."""


def to_snake_case(text: str) -> str:
    """``text`` in snake_case, as ADK names tools and arguments: ``listPets`` ->
    ``list_pets``, ``HTTPServer`` -> ``http_server``, ``/pets/{id}_get`` -> ``pets_id_get``."""
    words = _NOT_ALNUM.sub("_", text)
    words = _LOWER_THEN_UPPER.sub("_", words)
    words = _ACRONYM_THEN_WORD.sub("_", words)
    return "_".join(part for part in words.lower().split("_") if part)


def rename_python_keywords(s: str, prefix: str = "param_") -> str:
    """``s``, prefixed with ``prefix`` if it is a Python keyword (``for`` -> ``param_for``)."""
    return prefix + s if keyword.iskeyword(s) else s


def _as_schema(value: Any) -> dict[str, Any]:
    if value is None or value is True:
        return {}
    if isinstance(value, str):
        value = json.loads(value)
    if isinstance(value, BaseModel):
        value = value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if not isinstance(value, dict):
        raise TypeError(f"a parameter's schema is a JSON schema object, not {type(value).__name__}")
    return value


class ApiParameter(BaseModel):
    """One argument of a REST tool: its name in the API (``original_name``), where it goes
    (``param_location``: ``path``, ``query``, ``header``, ``cookie`` or ``body``), its JSON
    schema, and its name for the model (``py_name``: snake_case, a keyword prefixed with
    ``param_``; derived when not given)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    original_name: str
    param_location: str
    param_schema: dict[str, Any]
    description: str | None = ""
    py_name: str | None = ""
    required: bool = False

    @field_validator("param_schema", mode="before")
    @classmethod
    def _read_schema(cls, value: Any) -> dict[str, Any]:
        return _as_schema(value)

    def model_post_init(self, context: Any, /) -> None:
        if not self.py_name:
            derived = rename_python_keywords(to_snake_case(self.original_name))
            self.py_name = derived or _DEFAULT_NAMES.get(self.param_location, "value")
        self.description = self.description or self.param_schema.get("description") or ""

    @property
    def name(self) -> str:
        """``py_name`` (always set once the parameter is built)."""
        return self.py_name or ""

    def __str__(self) -> str:
        return f"{self.py_name} ({self.param_location} {self.original_name!r})"
